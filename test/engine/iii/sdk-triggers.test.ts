import { afterEach, describe, expect, it, vi } from "vitest";
import { eventually, serverWithWorkers, sleep } from "../../helpers/iii.ts";
import { json, SECURITY_HEADERS, securityHeadersOf } from "../../helpers/server.ts";

// Conformance with the real iii-sdk@0.22.1 (reference/iii-protocol.md §14): triggers registered by workers.
const env = serverWithWorkers();
const worker = (name: string) => env.worker(name);

const routeFor = (method: string, path: string) => () => findRoute(method, path);
function findRoute(method: string, path: string): boolean {
  return env.server.service.engine.triggers
    .list()
    .some(
      (record) =>
        record.type === "http" &&
        (record.config as { api_path?: string }).api_path === path &&
        ((record.config as { http_method?: string }).http_method ?? "GET").toUpperCase() === method,
    );
}

afterEach(async () => {
  vi.restoreAllMocks();
});

describe("http triggers from iii workers", () => {
  it("gives the handler iii's request object and maps its {status_code, headers, body} answer", async () => {
    const seen: Array<Record<string, unknown>> = [];
    const w = worker("items");
    w.registerFunction("items::create", async (req: Record<string, unknown>, metadata: unknown) => {
      seen.push({ ...req, metadata });
      return { status_code: 201, headers: { "x-a": "b" }, body: { ok: true } };
    });
    w.registerTrigger({
      type: "http",
      function_id: "items::create",
      config: { api_path: "api/items/:id", http_method: "post" },
      metadata: { route: "items" },
    });
    await eventually(routeFor("POST", "api/items/:id"));
    await eventually(() => env.server.service.engine.functions.get("items::create"));
    const response = await env.server.request("/api/items/42?x=1", {
      method: "POST",
      json: { a: 1 },
      headers: { "X-Custom": "Yes" },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-a")).toBe("b");
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(securityHeadersOf(response)).toEqual(SECURITY_HEADERS);
    expect(await json(response)).toEqual({ ok: true });
    const [req] = seen;
    expect(req).toMatchObject({
      path_params: { id: "42" },
      query_params: { x: "1" },
      body: { a: 1 },
      method: "POST",
      path: "/api/items/:id",
      trigger: { type: "http", path: "/api/items/:id", method: "POST" },
      metadata: { route: "items" },
      caller: { kind: "admin" },
    });
    const headers = (req?.headers ?? {}) as Record<string, string>;
    expect(headers["x-custom"]).toBe("Yes");
    // The caller's API key is ours, not the worker's: it is not passed on.
    expect(headers.authorization).toBeUndefined();
  });

  it("requires an API key on worker routes under /api, like every other API route", async () => {
    const w = worker("greet");
    w.registerFunction("greet::hello", async () => ({ status_code: 200, body: { hello: "world" } }));
    w.registerTrigger({ type: "http", function_id: "greet::hello", config: { api_path: "/api/greet" } });
    await eventually(routeFor("GET", "/api/greet"));
    expect((await env.server.request("/api/greet", { key: null })).status).toBe(401);
    const response = await env.server.request("/api/greet");
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ hello: "world" });
  });

  it("sends a string body with the worker's content type as is, and no result as 204", async () => {
    const w = worker("text");
    w.registerFunction("text::hi", async () => ({ headers: ["Content-Type: text/plain"], body: "hi" }));
    w.registerFunction("text::nothing", async () => undefined);
    w.registerFunction("text::plain", async () => ({ hello: "plain object" }));
    w.registerTrigger({ type: "http", function_id: "text::hi", config: { api_path: "/api/hi" } });
    w.registerTrigger({ type: "http", function_id: "text::nothing", config: { api_path: "/api/nothing" } });
    w.registerTrigger({ type: "http", function_id: "text::plain", config: { api_path: "/api/plain" } });
    await eventually(routeFor("GET", "/api/plain"));
    const hi = await env.server.request("/api/hi");
    expect(hi.headers.get("content-type")).toBe("text/plain");
    expect(await hi.text()).toBe("hi");
    expect((await env.server.request("/api/nothing")).status).toBe(204);
    expect(await json(await env.server.request("/api/plain"))).toEqual({ hello: "plain object" });
  });

  it("answers 500 with the worker's message when the handler throws, and 422 when its condition says no", async () => {
    const w = worker("fails");
    w.registerFunction("fails::boom", async () => {
      throw new Error("boom");
    });
    w.registerFunction("fails::never", async () => false);
    w.registerFunction("fails::guarded", async () => ({ body: "unreachable" }));
    w.registerTrigger({ type: "http", function_id: "fails::boom", config: { api_path: "/api/boom" } });
    w.registerTrigger({
      type: "http",
      function_id: "fails::guarded",
      config: { api_path: "/api/guarded", condition_function_id: "fails::never" },
    });
    await eventually(routeFor("GET", "/api/guarded"));
    const boom = await env.server.request("/api/boom");
    expect(boom.status).toBe(500);
    expect(await json(boom)).toEqual({ error: "boom" });
    const guarded = await env.server.request("/api/guarded");
    expect(guarded.status).toBe(422);
    expect(await json(guarded)).toEqual({ error: "Request condition not met" });
  });

  it("drops response headers Node could not send instead of failing the response", async () => {
    const w = worker("headers");
    w.registerFunction("headers::odd", async () => ({
      status_code: 200,
      headers: {
        "x-ok": "fine",
        "x-euro": "€",
        "x-control": "a\u0001b",
        "bad name": "x",
        "X-Frame-Options": "ALLOW",
      },
      body: { ok: true },
    }));
    w.registerTrigger({ type: "http", function_id: "headers::odd", config: { api_path: "/api/odd" } });
    await eventually(routeFor("GET", "/api/odd"));
    const response = await env.server.request("/api/odd");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-ok")).toBe("fine");
    expect(response.headers.get("x-euro")).toBeNull();
    expect(response.headers.get("x-control")).toBeNull();
    expect(securityHeadersOf(response)).toEqual(SECURITY_HEADERS);
  });

  it("passes headers as sent on a public route, where a webhook may bring its own Authorization", async () => {
    const seen: Array<Record<string, string>> = [];
    const w = worker("hooks");
    w.registerFunction("hooks::in", async (req: { headers: Record<string, string> }) => {
      seen.push(req.headers);
      return { status_code: 202, body: null, headers: { "content-type": "text/plain" } };
    });
    w.registerTrigger({
      type: "http",
      function_id: "hooks::in",
      config: { api_path: "/hooks/in", http_method: "POST" },
    });
    await eventually(routeFor("POST", "/hooks/in"));
    const response = await env.server.request("/hooks/in", {
      method: "POST",
      key: "their-own-scheme",
      json: {},
    });
    expect(response.status).toBe(202);
    expect(seen[0]?.authorization).toBe("Bearer their-own-scheme");
  });

  it("lets route middleware answer in place of the handler", async () => {
    const w = worker("mw");
    w.registerFunction("mw::deny", async (input: { request: { headers: Record<string, string> } }) =>
      input.request.headers["x-pass"] === "1"
        ? { action: "continue" }
        : { action: "respond", response: { status_code: 401, body: { error: "no pass" } } },
    );
    w.registerFunction("mw::secret", async () => ({ body: { secret: 42 } }));
    w.registerTrigger({
      type: "http",
      function_id: "mw::secret",
      config: { api_path: "/api/secret", middleware_function_ids: ["mw::deny"] },
    });
    await eventually(routeFor("GET", "/api/secret"));
    const denied = await env.server.request("/api/secret");
    expect(denied.status).toBe(401);
    expect(await json(denied)).toEqual({ error: "no pass" });
    expect(await json(await env.server.request("/api/secret", { headers: { "x-pass": "1" } }))).toEqual({
      secret: 42,
    });
  });

  it("refuses a worker route that clashes with an engine route, telling the worker", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const w = worker("hijack");
    w.registerFunction("hijack::keys", async () => ({ body: "stolen" }));
    w.registerTrigger({
      type: "http",
      function_id: "hijack::keys",
      config: { api_path: "/api/keys", http_method: "GET" },
    });
    await eventually(() =>
      errors.mock.calls.some((call) => String(call[0]).includes("Trigger registration failed")),
    );
    const keys = await json(await env.server.request("/api/keys"));
    expect(Array.isArray(keys.keys)).toBe(true);
  });

  it("removes a worker's routes the moment it disconnects", async () => {
    const w = worker("gone");
    w.registerFunction("gone::here", async () => ({ body: "here" }));
    w.registerTrigger({ type: "http", function_id: "gone::here", config: { api_path: "/api/here" } });
    await eventually(routeFor("GET", "/api/here"));
    expect((await env.server.request("/api/here")).status).toBe(200);
    await w.shutdown();
    await eventually(() => !findRoute("GET", "/api/here"));
    expect((await env.server.request("/api/here")).status).toBe(404);
  });
});

describe("cron triggers from iii workers", () => {
  it("fires every second with iii's payload and the trigger's metadata, and stops when unregistered", async () => {
    const ticks: Array<{ data: Record<string, unknown>; metadata: unknown }> = [];
    const w = worker("ticker");
    w.registerFunction("ticker::tick", async (data: Record<string, unknown>, metadata: unknown) => {
      ticks.push({ data, metadata });
    });
    const trigger = w.registerTrigger({
      type: "cron",
      function_id: "ticker::tick",
      config: { expression: "*/1 * * * * *" },
      metadata: { job: "t" },
    });
    await eventually(() => ticks.length >= 2, 4000);
    const [first] = ticks;
    expect(first?.data).toMatchObject({ trigger: "cron", job_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(typeof first?.data.scheduled_time).toBe("string");
    expect(typeof first?.data.actual_time).toBe("string");
    expect(first?.metadata).toEqual({ job: "t" });
    trigger.unregister();
    await sleep(300);
    const count = ticks.length;
    await sleep(1500);
    expect(ticks.length).toBe(count);
  });

  it("refuses an invalid expression with a trigger registration error", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const w = worker("bad-cron");
    w.registerFunction("bad::tick", async () => undefined);
    w.registerTrigger({ type: "cron", function_id: "bad::tick", config: { expression: "*/5 * * * *" } });
    const call = await eventually(() =>
      errors.mock.calls.find((args) => String(args[0]).includes("Trigger registration failed")),
    );
    expect(String(call[0])).toContain("six fields");
  });
});

describe("subscribe triggers from iii workers", () => {
  it("delivers a publish to subscribers on two workers, and to the other after one unsubscribes", async () => {
    const received: Record<string, unknown[]> = { a: [], b: [] };
    const a = worker("a");
    const b = worker("b");
    a.registerFunction("a::orders", async (data: unknown) => void received.a?.push(data));
    b.registerFunction("b::orders", async (data: unknown) => void received.b?.push(data));
    const subA = a.registerTrigger({
      type: "subscribe",
      function_id: "a::orders",
      config: { topic: "orders" },
    });
    b.registerTrigger({ type: "subscribe", function_id: "b::orders", config: { topic: "orders" } });
    const subscribers = () =>
      env.server.service.engine.triggers
        .list()
        .filter(
          (record) => record.type === "subscribe" && (record.config as { topic: string }).topic === "orders",
        ).length;
    await eventually(() => subscribers() === 2);
    expect(
      await a.trigger({ function_id: "publish", payload: { topic: "orders", data: { id: 1 } } }),
    ).toBeUndefined();
    await eventually(() => received.a?.length === 1 && received.b?.length === 1);
    expect(received).toEqual({ a: [{ id: 1 }], b: [{ id: 1 }] });
    subA.unregister();
    await eventually(() => subscribers() === 1);
    await b.trigger({ function_id: "publish", payload: { topic: "orders", data: { id: 2 } } });
    await eventually(() => received.b?.length === 2);
    expect(received.a).toEqual([{ id: 1 }]);
  });

  it("delivers events published in-process to a worker's subscription", async () => {
    const received: unknown[] = [];
    const w = worker("listener");
    w.registerFunction("listener::audit", async (data: unknown) => void received.push(data));
    w.registerTrigger({ type: "subscribe", function_id: "listener::audit", config: { topic: "things" } });
    await eventually(() =>
      env.server.service.engine.triggers.list().some((record) => record.function_id === "listener::audit"),
    );
    await env.server.service.engine.trigger({
      function_id: "publish",
      payload: { topic: "things", data: "x" },
    });
    await eventually(() => received.length === 1);
    expect(received).toEqual(["x"]);
  });
});

describe("trigger types provided by iii workers", () => {
  it("forwards bindings to the provider, which can call the bound function; unbinding reaches it too", async () => {
    const registered: unknown[] = [];
    const unregistered: unknown[] = [];
    const provider = worker("provider");
    provider.registerTriggerType(
      { id: "webhook", description: "custom" },
      {
        registerTrigger: async (config) => void registered.push(config),
        unregisterTrigger: async (config) => void unregistered.push(config),
      },
    );
    await eventually(() => env.server.service.engine.triggers.hasType("webhook"));
    const consumer = worker("consumer");
    consumer.registerFunction("c::fn", async (data: unknown) => ({ got: data }));
    const binding = consumer.registerTrigger({
      type: "webhook",
      function_id: "c::fn",
      config: { x: 1 },
      metadata: { m: 1 },
    });
    await eventually(() => registered.length === 1);
    expect(registered[0]).toMatchObject({ function_id: "c::fn", config: { x: 1 }, metadata: { m: 1 } });
    expect(await provider.trigger({ function_id: "c::fn", payload: { hook: true } })).toEqual({
      got: { hook: true },
    });
    binding.unregister();
    await eventually(() => unregistered.length === 1);
    expect(unregistered[0]).toMatchObject({ id: (registered[0] as { id: string }).id, function_id: "" });
  });

  it("parks a binding made before its provider connects, and replays bindings to a restarted provider", async () => {
    const consumer = worker("consumer");
    consumer.registerFunction("c::fn", async () => null);
    consumer.registerTrigger({ type: "late", function_id: "c::fn", config: { y: 2 } });
    await eventually(() =>
      env.server.service.engine.triggers.list().some((record) => record.type === "late"),
    );
    const seen: unknown[] = [];
    const handlers = {
      registerTrigger: async (config: unknown) => void seen.push(config),
      unregisterTrigger: async () => undefined,
    };
    const first = worker("provider-1");
    first.registerTriggerType({ id: "late", description: "late provider" }, handlers);
    await eventually(() => seen.length === 1);
    await first.shutdown();
    await eventually(() => !env.server.service.engine.triggers.hasType("late"));
    const second = worker("provider-2");
    second.registerTriggerType({ id: "late", description: "late provider" }, handlers);
    await eventually(() => seen.length === 2);
    expect(seen[1]).toMatchObject({ function_id: "c::fn", config: { y: 2 } });
  });

  it("forwards a provider's refusal to the worker that registered the binding", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    worker("picky").registerTriggerType(
      { id: "picky", description: "refuses everything" },
      {
        registerTrigger: async () => {
          throw new Error("not today");
        },
        unregisterTrigger: async () => undefined,
      },
    );
    await eventually(() => env.server.service.engine.triggers.hasType("picky"));
    const consumer = worker("consumer");
    consumer.registerFunction("c::fn", async () => null);
    consumer.registerTrigger({ type: "picky", function_id: "c::fn", config: {} });
    const call = await eventually(() =>
      errors.mock.calls.find((args) => String(args[0]).includes("not today")),
    );
    expect(String(call[0])).toContain("Trigger registration failed");
  });

  it("does not let a worker take over a built-in trigger type", async () => {
    const usurper = worker("usurper");
    usurper.registerTriggerType(
      { id: "cron", description: "mine now" },
      { registerTrigger: async () => undefined, unregisterTrigger: async () => undefined },
    );
    // The SDK sends trigger types before functions: once this function is in, the type frame was handled.
    usurper.registerFunction("usurper::marker", async () => null);
    await eventually(() => env.server.service.engine.functions.get("usurper::marker"));
    const cron = env.server.service.engine.triggers.listTypes().find((type) => type.id === "cron");
    expect(cron?.description).not.toBe("mine now");
  });

  it("moves a type's bindings to a new provider and tells the previous one to let go of them", async () => {
    const calls: string[] = [];
    const handlersFor = (name: string) => ({
      registerTrigger: async (config: { id: string }) => void calls.push(`${name} register ${config.id}`),
      unregisterTrigger: async (config: { id: string }) => void calls.push(`${name} unregister ${config.id}`),
    });
    worker("first").registerTriggerType({ id: "hook", description: "first" }, handlersFor("first"));
    await eventually(() => env.server.service.engine.triggers.hasType("hook"));
    const consumer = worker("consumer");
    consumer.registerFunction("c::fn", async () => null);
    consumer.registerTrigger({ type: "hook", function_id: "c::fn", config: {} });
    await eventually(() => calls.length === 1);
    const id = calls[0]?.split(" ")[2];
    worker("second").registerTriggerType({ id: "hook", description: "second" }, handlersFor("second"));
    await eventually(() => calls.length === 3);
    expect(calls.slice(1).sort()).toEqual([`first unregister ${id}`, `second register ${id}`]);
  });
});
