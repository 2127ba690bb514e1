import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Engine } from "../../src/engine/engine.ts";
import type { TriggerRecord } from "../../src/engine/types.ts";

describe("WorkerClient", () => {
  it("registers functions owned by the worker and calls them through the engine", async () => {
    const engine = new Engine();
    const math = engine.worker("math", "Arithmetic");
    const caller = engine.worker("caller");
    const registered = math.registerFunction(
      { id: "math::add", description: "Adds", input: z.object({ a: z.number(), b: z.number() }) },
      ({ a, b }) => ({ c: a + b }),
    );
    expect(registered).toEqual({ id: "math::add" });
    expect(engine.functions.get("math::add")).toMatchObject({ worker: "math", description: "Adds" });
    await expect(caller.trigger({ function_id: "math::add", payload: { a: 2, b: 3 } })).resolves.toEqual({
      c: 5,
    });
  });

  it("validates a worker's payloads with its zod schema", async () => {
    const engine = new Engine();
    const worker = engine.worker("w");
    worker.registerFunction({ id: "w::typed", input: z.object({ a: z.number() }) }, ({ a }) => a);
    await expect(worker.trigger({ function_id: "w::typed", payload: { a: "1" } })).rejects.toMatchObject({
      code: "validation",
      message: expect.stringContaining("a:"),
    });
  });

  it("registers trigger types and triggers under the worker's name", () => {
    const engine = new Engine();
    const provider = engine.worker("provider");
    const consumer = engine.worker("consumer");
    const seen: TriggerRecord[] = [];
    provider.registerTriggerType({
      id: "webhook",
      description: "test type",
      register: (record) => seen.push(record),
      unregister: () => {},
    });
    const handle = consumer.registerTrigger({
      type: "webhook",
      function_id: "consumer::fn",
      config: { x: 1 },
    });
    expect(seen).toEqual([
      { id: handle.id, type: "webhook", function_id: "consumer::fn", config: { x: 1 }, worker: "consumer" },
    ]);
    handle.unregister();
    expect(engine.triggers.list()).toEqual([]);
  });

  it("asking for the same worker twice keeps its first registration", () => {
    const engine = new Engine();
    engine.worker("w", "first description");
    engine.worker("w", "second description");
    const workers = engine.listWorkers();
    expect(workers).toHaveLength(1);
    expect(workers[0]).toMatchObject({
      name: "w",
      description: "first description",
      isolation: "in-process",
    });
  });
});
