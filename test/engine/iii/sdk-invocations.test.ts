import { InvocationError, TriggerAction } from "iii-sdk";
import { describe, expect, it } from "vitest";
import { eventually, serverWithWorkers, sleep } from "../../helpers/iii.ts";

// Conformance with the real iii-sdk@0.22.1 (reference/iii-protocol.md §14): invocations both ways.
const env = serverWithWorkers();
const worker = (name: string) => env.worker(name);

async function registered(id: string): Promise<void> {
  await eventually(() => env.server.service.engine.functions.get(id));
}

async function rejection(call: Promise<unknown>): Promise<InvocationError> {
  const error = await call.then(
    () => {
      throw new Error("expected a rejection");
    },
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(InvocationError);
  return error as InvocationError;
}

describe("iii handshake and discovery", () => {
  it("lists a worker with its name, runtime, version and pid once it has registered itself", async () => {
    worker("alpha").registerFunction("alpha::ping", async () => "pong");
    const b = worker("beta");
    const listed = await eventually(async () => {
      const { workers: all } = (await b.trigger({ function_id: "engine::workers::list", payload: {} })) as {
        workers: Array<Record<string, unknown>>;
      };
      return all.find((entry) => entry.name === "alpha");
    });
    expect(listed).toMatchObject({ name: "alpha", runtime: "node", version: "0.22.1", function_count: 1 });
    expect(typeof listed.pid).toBe("number");
    expect(listed.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("lists remote functions with their worker's name and hides engine internals", async () => {
    worker("alpha").registerFunction("alpha::ping", async () => "pong", { description: "answers pong" });
    const b = worker("beta");
    const found = await eventually(async () => {
      const { functions } = (await b.trigger({ function_id: "engine::functions::list", payload: {} })) as {
        functions: Array<{ function_id: string; worker_name: string; description?: string }>;
      };
      expect(functions.some((fn) => fn.function_id.startsWith("engine::"))).toBe(false);
      return functions.find((fn) => fn.function_id === "alpha::ping" && fn.worker_name === "alpha");
    });
    expect(found.description).toBe("answers pong");
  });
});

describe("iii invocations", () => {
  it("round-trips a call from one worker to another, registered and called before the sockets opened", async () => {
    // A registers before its socket is open (the SDK replays it on open) ...
    const a = worker("adder");
    a.registerFunction("math::add", async (data: { a: number; b: number }) => ({ c: data.a + data.b }));
    await registered("math::add");
    // ... and B calls before its own socket is open (the SDK queues the frame until then).
    const b = worker("caller");
    expect(await b.trigger({ function_id: "math::add", payload: { a: 2, b: 3 } })).toEqual({ c: 5 });
  });

  it("delivers the caller's metadata to the handler, and undefined when none is given", async () => {
    const seen: unknown[] = [];
    worker("meta").registerFunction("meta::echo", async (_data: unknown, metadata: unknown) => {
      seen.push(metadata);
      return null;
    });
    await registered("meta::echo");
    const b = worker("caller");
    await b.trigger({ function_id: "meta::echo", payload: {}, metadata: { tenant: "x" } });
    await b.trigger({ function_id: "meta::echo", payload: {} });
    expect(seen).toEqual([{ tenant: "x" }, undefined]);
  });

  it("propagates a handler's error with its code, message, function id and stack trace", async () => {
    worker("thrower").registerFunction("math::fail", async () => {
      throw new Error("boom");
    });
    await registered("math::fail");
    const error = await rejection(worker("caller").trigger({ function_id: "math::fail", payload: {} }));
    expect(error.code).toBe("invocation_failed");
    expect(error.message).toBe("invocation_failed: boom");
    expect(error.function_id).toBe("math::fail");
    expect(error.stacktrace).toContain("boom");
  });

  it("rejects a call to an unknown function with function_not_found", async () => {
    const error = await rejection(worker("caller").trigger({ function_id: "nope::x", payload: {} }));
    expect(error.code).toBe("function_not_found");
  });

  it("survives a caller's timeout: the late answer is dropped and the next call succeeds", async () => {
    worker("slow").registerFunction("slow::echo", async (data: { ms: number }) => {
      await sleep(data.ms);
      return data;
    });
    await registered("slow::echo");
    const b = worker("caller");
    const error = await rejection(
      b.trigger({ function_id: "slow::echo", payload: { ms: 500 }, timeoutMs: 100 }),
    );
    expect(error.code).toBe("TIMEOUT");
    await sleep(500);
    expect(await b.trigger({ function_id: "slow::echo", payload: { ms: 1 } })).toEqual({ ms: 1 });
  });

  it("runs a void call exactly once and answers nothing, not even for a missing function", async () => {
    let runs = 0;
    const counter = worker("counter");
    counter.registerFunction("count::hit", async () => {
      runs++;
      return { ok: true };
    });
    counter.registerFunction("count::get", async () => runs);
    await registered("count::get");
    const b = worker("caller");
    expect(
      await b.trigger({ function_id: "count::hit", payload: {}, action: TriggerAction.Void() }),
    ).toBeUndefined();
    expect(
      await b.trigger({ function_id: "nope::x", payload: {}, action: TriggerAction.Void() }),
    ).toBeUndefined();
    // Frames reach the worker in order and a handler counts as soon as it starts, so this sees them all.
    expect(await b.trigger({ function_id: "count::get", payload: {} })).toBe(1);
  });

  it("resolves undefined for handlers returning undefined or null, and for state::get of a missing key", async () => {
    const a = worker("empty");
    a.registerFunction("empty::undef", async () => undefined);
    a.registerFunction("empty::null", async () => null);
    await registered("empty::null");
    const b = worker("caller");
    expect(await b.trigger({ function_id: "empty::undef", payload: {} })).toBeUndefined();
    expect(await b.trigger({ function_id: "empty::null", payload: {} })).toBeUndefined();
    expect(
      await b.trigger({ function_id: "state::get", payload: { scope: "s", key: "missing" } }),
    ).toBeUndefined();
  });

  it("matches 200 parallel calls with random delays to their own results", async () => {
    worker("echo").registerFunction("echo::delay", async (data: { i: number }) => {
      await sleep(Math.random() * 30);
      return { i: data.i };
    });
    await registered("echo::delay");
    const b = worker("caller");
    const calls = Array.from({ length: 200 }, (_, i) =>
      b.trigger({ function_id: "echo::delay", payload: { i } }),
    );
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 200 }, (_, i) => ({ i })));
  });

  it("refuses an enqueued call with enqueue_error when no queue provider is installed", async () => {
    const error = await rejection(
      worker("caller").trigger({
        function_id: "x::y",
        payload: {},
        action: TriggerAction.Enqueue({ queue: "jobs" }),
      }),
    );
    expect(error.code).toBe("enqueue_error");
  });

  it("hands an enqueued call to a worker's engine::queue::enqueue and answers a receipt", async () => {
    const queued: unknown[] = [];
    worker("queue").registerFunction("engine::queue::enqueue", async (data: unknown) => {
      queued.push(data);
      return null;
    });
    await registered("engine::queue::enqueue");
    const receipt = (await worker("caller").trigger({
      function_id: "jobs::run",
      payload: { n: 1 },
      action: TriggerAction.Enqueue({ queue: "jobs" }),
    })) as { messageReceiptId: string };
    expect(receipt.messageReceiptId).toMatch(/^[0-9a-f-]{36}$/);
    expect(queued).toEqual([
      { queue: "jobs", function_id: "jobs::run", data: { n: 1 }, messageReceiptId: receipt.messageReceiptId },
    ]);
  });

  it("lets two workers call each other", async () => {
    const a = worker("a");
    const b = worker("b");
    a.registerFunction("a::double", async (data: { n: number }) => ({ n: data.n * 2 }));
    b.registerFunction("b::double_then_inc", async (data: { n: number }) => {
      const doubled = (await b.trigger({ function_id: "a::double", payload: data })) as { n: number };
      return { n: doubled.n + 1 };
    });
    a.registerFunction("a::ask_b", async (data: { n: number }) =>
      a.trigger({ function_id: "b::double_then_inc", payload: data }),
    );
    await registered("b::double_then_inc");
    await registered("a::ask_b");
    expect(await a.trigger({ function_id: "a::ask_b", payload: { n: 5 } })).toEqual({ n: 11 });
  });

  it("lets in-process code call a remote function through engine.trigger", async () => {
    worker("remote").registerFunction("remote::upper", async (data: { s: string }) => data.s.toUpperCase());
    await registered("remote::upper");
    expect(
      await env.server.service.engine.trigger({ function_id: "remote::upper", payload: { s: "hi" } }),
    ).toBe("HI");
  });
});

describe("iii state calls from a worker", () => {
  it("answers set, get, list (bare values), delete (bare old value) as iii does", async () => {
    const w = worker("stateful");
    const set1 = await w.trigger({
      function_id: "state::set",
      payload: { scope: "s", key: "k", value: { v: 1 } },
    });
    expect(set1).toMatchObject({ old_value: null, new_value: { v: 1 } });
    const set2 = await w.trigger({
      function_id: "state::set",
      payload: { scope: "s", key: "k", data: { v: 2 } },
    });
    expect(set2).toMatchObject({ old_value: { v: 1 }, new_value: { v: 2 } });
    expect(await w.trigger({ function_id: "state::get", payload: { scope: "s", key: "k" } })).toEqual({
      v: 2,
    });
    await w.trigger({ function_id: "state::set", payload: { scope: "s", key: "k2", value: 3 } });
    expect(await w.trigger({ function_id: "state::list", payload: { scope: "s" } })).toEqual([{ v: 2 }, 3]);
    const page = (await w.trigger({ function_id: "state::list", payload: { scope: "s", limit: 1 } })) as {
      items: Array<{ key: string }>;
    };
    expect(page.items.map((item) => item.key)).toEqual(["k"]);
    expect(await w.trigger({ function_id: "state::delete", payload: { scope: "s", key: "k" } })).toEqual({
      v: 2,
    });
    expect(await w.trigger({ function_id: "state::get", payload: { scope: "s", key: "k" } })).toBeUndefined();
  });

  it("loses no increment among 100 concurrent state::update calls", async () => {
    const w = worker("counter");
    const ops = [{ type: "increment", path: "n", by: 1 }];
    await Promise.all(
      Array.from({ length: 100 }, () =>
        w.trigger({ function_id: "state::update", payload: { scope: "c", key: "k", ops } }),
      ),
    );
    expect(await w.trigger({ function_id: "state::get", payload: { scope: "c", key: "k" } })).toEqual({
      n: 100,
    });
  });

  it("refuses invalid input to a built-in with a validation error naming the field", async () => {
    const error = await rejection(worker("w").trigger({ function_id: "state::get", payload: { scope: 1 } }));
    expect(error.code).toBe("deserialization_error");
    expect(error.message).toContain("scope");
  });
});
