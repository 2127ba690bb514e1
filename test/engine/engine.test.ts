import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Engine } from "../../src/engine/engine.ts";
import type { InvocationContext } from "../../src/engine/types.ts";
import { AppError } from "../../src/shared/errors.ts";
import { createCapturingLogger, deferred } from "../helpers/engine.ts";

async function rejectionOf(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error("expected the call to reject");
}

describe("Engine: register and trigger", () => {
  it("returns the handler's result for the payload it was called with", async () => {
    const engine = new Engine();
    engine.registerFunction("math", { id: "math::add" }, (input: { a: number; b: number }) => ({
      c: input.a + input.b,
    }));
    await expect(engine.trigger({ function_id: "math::add", payload: { a: 2, b: 3 } })).resolves.toEqual({
      c: 5,
    });
  });

  it("resolves a handler's promise", async () => {
    const engine = new Engine();
    engine.registerFunction("t", { id: "t::async" }, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return "done";
    });
    await expect(engine.trigger({ function_id: "t::async" })).resolves.toBe("done");
  });

  it("gives the handler its function id, the system principal by default, and the request's id and metadata", async () => {
    const engine = new Engine();
    const contexts: InvocationContext[] = [];
    engine.registerFunction("t", { id: "t::ctx" }, (_input, ctx) => {
      contexts.push(ctx);
    });
    await engine.trigger({ function_id: "t::ctx", requestId: "req-1", metadata: { m: 1 } });
    await engine.trigger({ function_id: "t::ctx", auth: { kind: "realm", keyId: "k1", realmId: "realm-a" } });
    expect(contexts[0]).toMatchObject({
      functionId: "t::ctx",
      auth: { kind: "system" },
      requestId: "req-1",
      metadata: { m: 1 },
    });
    expect(contexts[0].signal.aborted).toBe(false);
    expect(contexts[1].auth).toEqual({ kind: "realm", keyId: "k1", realmId: "realm-a" });
  });

  it("hands the handler the parsed payload, with schema defaults applied", async () => {
    const engine = new Engine();
    const input = z.object({ name: z.string(), limit: z.number().default(10) });
    engine.registerFunction("t", { id: "t::defaults", input }, (payload) => payload);
    await expect(engine.trigger({ function_id: "t::defaults", payload: { name: "x" } })).resolves.toEqual({
      name: "x",
      limit: 10,
    });
  });

  it("parses a missing payload as an empty object", async () => {
    const engine = new Engine();
    const input = z.object({ limit: z.number().default(5) });
    engine.registerFunction("t", { id: "t::empty", input }, (payload) => payload);
    await expect(engine.trigger({ function_id: "t::empty" })).resolves.toEqual({ limit: 5 });
  });

  it("propagates an AppError thrown by the handler unchanged", async () => {
    const engine = new Engine();
    const failure = new AppError("conflict", "already taken");
    engine.registerFunction("t", { id: "t::conflict" }, () => {
      throw failure;
    });
    await expect(engine.trigger({ function_id: "t::conflict" })).rejects.toBe(failure);
  });
});

describe("Engine: input validation", () => {
  const input = z.strictObject({
    user: z.object({ name: z.string() }),
    tags: z.array(z.string()).optional(),
  });

  it("refuses an invalid payload with a validation AppError whose message names the field path", async () => {
    const engine = new Engine();
    engine.registerFunction("t", { id: "t::validated", input }, () => "ran");
    const error = await rejectionOf(
      engine.trigger({ function_id: "t::validated", payload: { user: { name: 1 } } }),
    );
    expect(error.code).toBe("validation");
    expect(error.status).toBe(400);
    expect(error.message).toContain("user.name");
  });

  it("names array indexes in the field path", async () => {
    const engine = new Engine();
    engine.registerFunction("t", { id: "t::validated", input }, () => "ran");
    const error = await rejectionOf(
      engine.trigger({ function_id: "t::validated", payload: { user: { name: "a" }, tags: ["ok", 7] } }),
    );
    expect(error.code).toBe("validation");
    expect(error.message).toContain("tags.1");
  });

  it("names an unknown key refused by a strict schema", async () => {
    const engine = new Engine();
    engine.registerFunction("t", { id: "t::validated", input }, () => "ran");
    const error = await rejectionOf(
      engine.trigger({ function_id: "t::validated", payload: { user: { name: "a" }, extra: true } }),
    );
    expect(error.code).toBe("validation");
    expect(error.message).toContain("extra");
  });

  it("does not run the handler when the payload is invalid", async () => {
    const engine = new Engine();
    let calls = 0;
    engine.registerFunction("t", { id: "t::validated", input }, () => {
      calls++;
    });
    await expect(engine.trigger({ function_id: "t::validated", payload: {} })).rejects.toBeInstanceOf(
      AppError,
    );
    expect(calls).toBe(0);
  });
});

describe("Engine: unknown functions", () => {
  it("rejects a call to an unregistered function with not_found naming it", async () => {
    const engine = new Engine();
    const error = await rejectionOf(engine.trigger({ function_id: "nope::missing" }));
    expect(error.code).toBe("not_found");
    expect(error.status).toBe(404);
    expect(error.message).toBe("Function nope::missing not found");
  });
});

describe("Engine: timeouts", () => {
  it("fails a call that outlives timeout_ms with a timeout AppError and aborts the handler's signal", async () => {
    const engine = new Engine();
    let seen: AbortSignal | undefined;
    const aborted = deferred();
    engine.registerFunction("t", { id: "t::slow" }, (_input, ctx) => {
      seen = ctx.signal;
      ctx.signal.addEventListener("abort", () => aborted.resolve());
      return new Promise(() => {});
    });
    const error = await rejectionOf(engine.trigger({ function_id: "t::slow", timeout_ms: 20 }));
    expect(error.code).toBe("timeout");
    expect(error.message).toContain("t::slow");
    await aborted.promise;
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(error);
  });

  it("does not abort the signal of a call that finishes in time", async () => {
    const engine = new Engine();
    let seen: AbortSignal | undefined;
    engine.registerFunction("t", { id: "t::quick" }, (_input, ctx) => {
      seen = ctx.signal;
      return "ok";
    });
    await expect(engine.trigger({ function_id: "t::quick", timeout_ms: 60_000 })).resolves.toBe("ok");
    expect(seen?.aborted).toBe(false);
  });

  it("treats a timeout longer than a timer can hold as a very long timeout, not an immediate one", async () => {
    const engine = new Engine();
    engine.registerFunction("t", { id: "t::later" }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return "finished";
    });
    for (const timeout_ms of [Number.POSITIVE_INFINITY, 3_000_000_000, Number.MAX_SAFE_INTEGER]) {
      await expect(engine.trigger({ function_id: "t::later", timeout_ms })).resolves.toBe("finished");
    }
  });
});

describe("Engine: fire-and-forget (void) calls", () => {
  it("resolves undefined at once while the handler still runs, and the handler runs to the end", async () => {
    const engine = new Engine();
    const gate = deferred();
    const events: string[] = [];
    engine.registerFunction("t", { id: "t::background" }, async (input: { n: number }) => {
      events.push(`start ${input.n}`);
      await gate.promise;
      events.push("end");
      return "ignored";
    });
    await expect(
      engine.trigger({ function_id: "t::background", payload: { n: 1 }, action: { type: "void" } }),
    ).resolves.toBeUndefined();
    expect(events).toEqual(["start 1"]);
    gate.resolve();
    await engine.drain();
    expect(events).toEqual(["start 1", "end"]);
  });

  it("logs a failing handler instead of throwing to the caller", async () => {
    const { logger, entries } = createCapturingLogger();
    const engine = new Engine({ logger });
    engine.registerFunction("t", { id: "t::broken" }, async () => {
      throw new Error("boom");
    });
    await expect(
      engine.trigger({ function_id: "t::broken", action: { type: "void" } }),
    ).resolves.toBeUndefined();
    await engine.drain();
    const entry = entries.find((e) => e.msg === "fire-and-forget invocation failed");
    expect(entry).toMatchObject({ functionId: "t::broken", err: { message: "boom" } });
  });

  it("logs, rather than throws, a call to an unknown function or with an invalid payload", async () => {
    const { logger, entries } = createCapturingLogger();
    const engine = new Engine({ logger });
    engine.registerFunction("t", { id: "t::typed", input: z.object({ n: z.number() }) }, () => "ran");
    await expect(
      engine.trigger({ function_id: "t::missing", action: { type: "void" } }),
    ).resolves.toBeUndefined();
    await expect(
      engine.trigger({ function_id: "t::typed", payload: { n: "x" }, action: { type: "void" } }),
    ).resolves.toBeUndefined();
    await engine.drain();
    const failures = entries.filter((e) => e.msg === "fire-and-forget invocation failed");
    expect(failures.map((e) => e.functionId)).toEqual(["t::missing", "t::typed"]);
    expect(failures[0].err).toMatchObject({ message: "Function t::missing not found" });
    expect(failures[1].err).toMatchObject({ message: expect.stringContaining("n:") });
  });

  it("drain waits for every fire-and-forget call still running", async () => {
    const engine = new Engine();
    let finished = 0;
    engine.registerFunction("t", { id: "t::tick" }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      finished++;
    });
    for (let i = 0; i < 5; i++) await engine.trigger({ function_id: "t::tick", action: { type: "void" } });
    await engine.drain();
    expect(finished).toBe(5);
  });
});

describe("Engine: invocation error listeners", () => {
  it("tell listeners about handler failures, timeouts and failed void calls, with the function id", async () => {
    const engine = new Engine();
    const seen: Array<[string, unknown]> = [];
    engine.onInvocationError((functionId, error) => seen.push([functionId, error]));
    const failure = new Error("boom");
    engine.registerFunction("t", { id: "t::fails" }, () => {
      throw failure;
    });
    engine.registerFunction("t", { id: "t::hangs" }, () => new Promise(() => {}));
    engine.registerFunction("t", { id: "t::fine" }, () => "ok");

    await expect(engine.trigger({ function_id: "t::fails" })).rejects.toBe(failure);
    await expect(engine.trigger({ function_id: "t::hangs", timeout_ms: 10 })).rejects.toMatchObject({
      code: "timeout",
    });
    await engine.trigger({ function_id: "t::fails", action: { type: "void" } });
    await engine.drain();
    await engine.trigger({ function_id: "t::fine" });

    expect(seen.map(([id]) => id)).toEqual(["t::fails", "t::hangs", "t::fails"]);
    expect(seen[0][1]).toBe(failure);
    expect(seen[1][1]).toMatchObject({ code: "timeout" });
  });

  it("a listener that throws neither hides the original error nor stops the other listeners", async () => {
    const { logger, entries } = createCapturingLogger();
    const engine = new Engine({ logger });
    const seen: string[] = [];
    engine.onInvocationError(() => {
      throw new Error("listener bug");
    });
    engine.onInvocationError((functionId) => seen.push(functionId));
    const failure = new AppError("conflict", "original");
    engine.registerFunction("t", { id: "t::fails" }, () => {
      throw failure;
    });
    await expect(engine.trigger({ function_id: "t::fails" })).rejects.toBe(failure);
    expect(seen).toEqual(["t::fails"]);
    expect(entries.some((e) => e.msg === "invocation error listener failed")).toBe(true);
  });
});
