import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { call, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { eventually, type RawClient, rawClient } from "../../helpers/iii.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

// What one worker may not take from the engine, from other workers, or from other realms' callers.
let server: TestServer | undefined;
const clients: RawClient[] = [];

async function start(): Promise<TestServer> {
  server ??= await startTestServer();
  return server;
}

async function connect(): Promise<RawClient> {
  const client = await rawClient((await start()).service.engineUrl as string);
  clients.push(client);
  await client.next((frame) => frame.type === "workerregistered");
  return client;
}

/** Resolves once the engine has handled every frame the client sent before (frames are handled in order). */
async function handled(client: RawClient): Promise<void> {
  const id = `sync-${client.frames.length}-${Math.random()}`;
  client.send({
    type: "invokefunction",
    invocation_id: id,
    function_id: "state::get",
    data: { scope: "s", key: "k" },
  });
  await client.next((frame) => frame.type === "invocationresult" && frame.invocation_id === id);
}

function route(client: RawClient, id: string, functionId: string, path: string, method = "GET"): void {
  const config = { api_path: path, http_method: method };
  client.send({ type: "registertrigger", id, trigger_type: "http", function_id: functionId, config });
}

const refusedTrigger = (id: string) => (frame: Record<string, unknown>) =>
  frame.type === "triggerregistrationresult" && frame.id === id && frame.error !== undefined;

afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.terminate();
  await server?.close();
  server = undefined;
});

describe("functions a worker registered before the engine did", () => {
  it("stay the engine's: a worker that held the id can neither register it again nor fall back onto it", async () => {
    const first = await connect();
    const second = await connect();
    for (const client of [first, second]) {
      client.send({ type: "registerfunction", id: "late::tool" });
      await handled(client);
    }
    const engine = (await start()).service.engine;
    // An integration loading after the workers connected takes the id, as in-process code may.
    engine.worker("late").registerFunction({ id: "late::tool" }, () => "in-process");
    first.send({ type: "registerfunction", id: "late::tool" });
    const rejected = await first.next((frame) => frame.type === "registrationrejected");
    expect(rejected.message).toMatch(/provided by the engine/);
    // The latest registrant leaving must not hand the id back to the one before it.
    second.socket.terminate();
    await eventually(() => server?.service.iii.hub.connections.size === 1);
    expect(engine.functions.get("late::tool")?.worker).toBe("late");
    expect(await engine.trigger({ function_id: "late::tool", payload: {} })).toBe("in-process");
  });
});

describe("routes of iii workers", () => {
  it("may not overlap an engine route, whatever find-my-way would prefer", async () => {
    const worker = await connect();
    worker.send({ type: "registerfunction", id: "evil::agents" });
    const refusals: Record<string, RegExp> = {
      "/api/agents/agent-1": /overlaps GET \/api\/agents\/:id, a route of another worker/,
      "/api/agents/agent-:id": /overlaps GET \/api\/agents\/:id/,
      "/api//agents/x/": /overlaps GET \/api\/agents\/:id/,
      "/api/agents/:id(^.*/?.*$)": /regular expressions are not supported in paths/,
    };
    const paths = Object.keys(refusals);
    for (const [n, path] of paths.entries()) route(worker, `t${n}`, "evil::agents", path);
    for (const [n, path] of paths.entries()) {
      const refused = await worker.next(refusedTrigger(`t${n}`));
      expect((refused.error as { message: string }).message).toMatch(refusals[path] as RegExp);
    }
    await handled(worker);
    // The engine still answers for its route: the agent does not exist.
    expect((await server?.request("/api/agents/agent-1"))?.status).toBe(404);
    expect(worker.frames.some((frame) => frame.type === "invokefunction")).toBe(false);
  });

  it("may not overlap another worker's route, and are accepted where nothing overlaps", async () => {
    const owner = await connect();
    const intruder = await connect();
    owner.send({ type: "registerfunction", id: "owner::hook" });
    intruder.send({ type: "registerfunction", id: "intruder::hook" });
    route(owner, "own", "owner::hook", "/hooks/:id", "POST");
    await handled(owner);
    route(intruder, "steal", "intruder::hook", "/hooks/special", "post");
    route(intruder, "other-method", "intruder::hook", "/hooks/special", "GET");
    route(intruder, "longer", "intruder::hook", "/hooks/:id/status", "POST");
    const refused = await intruder.next(refusedTrigger("steal"));
    expect((refused.error as { message: string }).message).toBe(
      "Route POST /hooks/special overlaps POST /hooks/:id, a route of another worker",
    );
    await handled(intruder);
    expect(intruder.frames.some(refusedTrigger("other-method"))).toBe(false);
    expect(intruder.frames.some(refusedTrigger("longer"))).toBe(false);
    // A worker may still refine its own routes.
    route(owner, "own-special", "owner::hook", "/hooks/special", "POST");
    await handled(owner);
    expect(owner.frames.some(refusedTrigger("own-special"))).toBe(false);
  });
});

describe("a worker's function opened to some realms (metadata.realms)", () => {
  it("is refused to another realm's key, which a workflow step cannot get around", async () => {
    const service = await start();
    const worker = await connect();
    const realmA = await newRealm(service, "A");
    const realmB = await newRealm(service, "B");
    const keyB = await realmKey(service, realmB);
    worker.send({ type: "registerfunction", id: "crm::lookup", metadata: { realms: [realmA] } });
    await handled(worker);
    // A workflow of realm B's cannot name it (as if it did not exist), and a call as realm B is refused.
    const steps = [{ name: "peek", functionId: "crm::lookup", promptTemplate: "x" }];
    const written = await call(service, "POST", "/api/workflows", { id: "peek", name: "peek", steps }, keyB);
    expect(written.status).toBe(400);
    expect(written.body.error).toContain("does not exist");
    const engine = service.service.engine;
    const refused = engine.trigger({
      function_id: "crm::lookup",
      payload: {},
      auth: { kind: "realm", keyId: "k", realmId: realmB },
    });
    await expect(refused).rejects.toThrow(`Function crm::lookup is not available to realm ${realmB}`);
    expect(worker.frames.some((frame) => frame.type === "invokefunction")).toBe(false);
    // Its own realm and the admin reach it.
    for (const auth of [
      { kind: "realm" as const, keyId: "k", realmId: realmA },
      { kind: "admin" as const, keyId: "admin" },
    ]) {
      const answered = engine.trigger({ function_id: "crm::lookup", payload: {}, auth });
      const invocation = await worker.next((frame) => frame.type === "invokefunction");
      worker.send({ type: "invocationresult", invocation_id: invocation.invocation_id, result: auth.kind });
      expect(await answered).toBe(auth.kind);
      worker.frames.length = 0;
    }
  });
});

describe("what a registration holds", () => {
  it("is bounded: metadata or a trigger config of a whole frame is refused, not kept for the worker's lifetime", async () => {
    const worker = await connect();
    // Past the default limit (256 KiB), far within a frame (8 MiB).
    const blob = "x".repeat(300 * 1024);
    worker.send({ type: "registerfunction", id: "big::fn", metadata: { blob } });
    const rejected = await worker.next((frame) => frame.type === "registrationrejected");
    expect(rejected.message).toMatch(
      /^The metadata of big::fn is \d+ characters of JSON, more than the limit/,
    );
    // Small, but nested deeper than JSON.stringify goes: GET /api/functions, which lists the
    // request_format, failed (500) for every caller.
    const depth = 20_000;
    const schema = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    worker.send(`{"type":"registerfunction","id":"deep::fn","metadata":{"request_format":${schema}}}`);
    const deep = await worker.next(
      (frame) => frame.type === "registrationrejected" && frame.function_id === "deep::fn",
    );
    expect(deep.message).toBe("The metadata of deep::fn is nested deeper than 64 levels");
    worker.send({ type: "registerfunction", id: "small::fn", metadata: { note: "fits" } });
    worker.send({
      type: "registertrigger",
      id: "big-cron",
      trigger_type: "cron",
      function_id: "small::fn",
      config: { expression: "0 0 * * * *", blob },
    });
    const refused = await worker.next(refusedTrigger("big-cron"));
    expect((refused.error as { message: string }).message).toMatch(/^Trigger big-cron is \d+ characters/);
    const engine = (await start()).service.engine;
    expect(engine.functions.get("big::fn")).toBeUndefined();
    expect(engine.functions.get("deep::fn")).toBeUndefined();
    expect((await server?.request("/api/functions"))?.status).toBe(200);
    expect(engine.functions.get("small::fn")?.metadata).toEqual({ note: "fits" });
    expect(engine.triggers.get("big-cron")).toBeUndefined();
  });
});

/** A bare socket on `/otel`, as anyone may open one; resolves `ponged` when the engine answers a ping. */
async function telemetrySocket(engineUrl: string): Promise<{ socket: WebSocket; ponged: Promise<void> }> {
  const socket = new WebSocket(`${engineUrl}/otel`);
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  const ponged = new Promise<void>((resolve) => socket.once("pong", () => resolve()));
  socket.ping();
  return { socket, ponged };
}

describe("the worker port", () => {
  it("refuses browsers, which send an Origin header and need no token to reach localhost", async () => {
    const { service } = await start();
    await expect(rawClient(service.engineUrl as string, { origin: "https://evil.example" })).rejects.toThrow(
      /403/,
    );
    await connect();
  });

  it("behind a token, reads no telemetry socket until a worker has connected from its address", async () => {
    const token = "engine-token-0123456789";
    server = await startTestServer({ engineToken: token });
    const url = server.service.engineUrl as string;
    const early = await telemetrySocket(url);
    let answered = false;
    void early.ponged.then(() => {
      answered = true;
    });
    // A round trip on the port after the ping was sent: a socket being read would have answered by now.
    expect((await fetch(url.replace("ws:", "http:"))).status).toBe(426);
    expect(answered).toBe(false);
    clients.push(await rawClient(url, { authorization: `Bearer ${token}` }));
    await early.ponged;
    const late = await telemetrySocket(url);
    await late.ponged;
    for (const { socket } of [early, late]) socket.terminate();
  });
});
