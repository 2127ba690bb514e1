import { describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.ts";
import type { TriggerRecord, TriggerTypeProvider } from "../../src/engine/types.ts";
import { AppError } from "../../src/shared/errors.ts";
import { createCapturingLogger } from "../helpers/engine.ts";

/** A trigger type that keeps what it was given; a real provider, as a remote worker would offer one. */
class RecordingTriggerType implements TriggerTypeProvider {
  readonly id: string;
  readonly description = "records registrations";
  readonly registered: TriggerRecord[] = [];
  readonly unregistered: TriggerRecord[] = [];
  refuse: Error | null = null;

  constructor(id: string) {
    this.id = id;
  }

  register(trigger: TriggerRecord): void {
    if (this.refuse) throw this.refuse;
    this.registered.push(trigger);
  }

  unregister(trigger: TriggerRecord): void {
    this.unregistered.push(trigger);
  }
}

describe("trigger registry (through the engine)", () => {
  it("hands a registration to its type with the id, function, config, metadata and worker", () => {
    const engine = new Engine();
    const type = new RecordingTriggerType("webhook");
    engine.registerTriggerType(type);
    const handle = engine.registerTrigger("w", {
      type: "webhook",
      function_id: "c::fn",
      config: { x: 1 },
      metadata: { m: 1 },
    });
    expect(type.registered).toEqual([
      {
        id: handle.id,
        type: "webhook",
        function_id: "c::fn",
        config: { x: 1 },
        metadata: { m: 1 },
        worker: "w",
      },
    ]);
    expect(engine.triggers.list().map((t) => t.id)).toEqual([handle.id]);
  });

  it("keeps a given trigger id, and registering the same id again replaces the binding", () => {
    const engine = new Engine();
    const type = new RecordingTriggerType("webhook");
    engine.registerTriggerType(type);
    engine.registerTrigger("w", { id: "trig-1", type: "webhook", function_id: "c::a", config: {} });
    engine.registerTrigger("w", { id: "trig-1", type: "webhook", function_id: "c::b", config: {} });
    expect(type.unregistered.map((t) => t.function_id)).toEqual(["c::a"]);
    expect(engine.triggers.list()).toHaveLength(1);
    expect(engine.triggers.list()[0].function_id).toBe("c::b");
  });

  it("parks a trigger of an unregistered type and activates it when the type is registered", () => {
    const engine = new Engine();
    const handle = engine.registerTrigger("w", { type: "webhook", function_id: "c::fn", config: { x: 1 } });
    expect(engine.triggers.list().map((t) => t.id)).toEqual([handle.id]);
    const type = new RecordingTriggerType("webhook");
    engine.registerTriggerType(type);
    expect(type.registered.map((t) => t.id)).toEqual([handle.id]);
    expect(type.registered[0].config).toEqual({ x: 1 });
  });

  it("leaves parked triggers of other types parked", () => {
    const engine = new Engine();
    engine.registerTrigger("w", { type: "other", function_id: "c::fn", config: {} });
    const type = new RecordingTriggerType("webhook");
    engine.registerTriggerType(type);
    expect(type.registered).toEqual([]);
    expect(engine.triggers.list()).toHaveLength(1);
  });

  it("a parked trigger that is unregistered never reaches its type", () => {
    const engine = new Engine();
    const handle = engine.registerTrigger("w", { type: "webhook", function_id: "c::fn", config: {} });
    handle.unregister();
    expect(engine.triggers.list()).toEqual([]);
    const type = new RecordingTriggerType("webhook");
    engine.registerTriggerType(type);
    expect(type.registered).toEqual([]);
  });

  it("a parked trigger its type refuses on arrival is logged and dropped, and the type still registers", () => {
    const { logger, entries } = createCapturingLogger();
    const engine = new Engine({ logger });
    engine.registerTrigger("w", { type: "webhook", function_id: "c::fn", config: {} });
    const type = new RecordingTriggerType("webhook");
    type.refuse = new Error("bad config");
    engine.registerTriggerType(type);
    expect(engine.triggers.hasType("webhook")).toBe(true);
    expect(engine.triggers.list()).toEqual([]);
    expect(entries.some((e) => e.msg === "parked trigger refused by its type")).toBe(true);
  });

  it("unregister removes an active trigger and tells its type", () => {
    const engine = new Engine();
    const type = new RecordingTriggerType("webhook");
    engine.registerTriggerType(type);
    const handle = engine.registerTrigger("w", { type: "webhook", function_id: "c::fn", config: {} });
    handle.unregister();
    expect(type.unregistered.map((t) => t.id)).toEqual([handle.id]);
    expect(engine.triggers.list()).toEqual([]);
    expect(engine.triggers.remove(handle.id)).toBe(false);
  });

  it("a type's refusal is a validation error naming the function, type and reason, and nothing is kept", () => {
    const engine = new Engine();
    const type = new RecordingTriggerType("webhook");
    type.refuse = new Error("needs a url");
    engine.registerTriggerType(type);
    let thrown: unknown;
    try {
      engine.registerTrigger("w", { type: "webhook", function_id: "c::fn", config: {} });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe("validation");
    expect((thrown as AppError).message).toContain("c::fn");
    expect((thrown as AppError).message).toContain("webhook");
    expect((thrown as AppError).message).toContain("needs a url");
    expect(engine.triggers.list()).toEqual([]);
  });

  it("an AppError refusal reaches the caller unchanged", () => {
    const engine = new Engine();
    const type = new RecordingTriggerType("webhook");
    const refusal = new AppError("forbidden", "not yours");
    type.refuse = refusal;
    engine.registerTriggerType(type);
    expect(() => engine.registerTrigger("w", { type: "webhook", function_id: "c::fn", config: {} })).toThrow(
      refusal,
    );
  });

  it("refuses a second trigger type with the same id", () => {
    const engine = new Engine();
    engine.registerTriggerType(new RecordingTriggerType("webhook"));
    expect(() => engine.registerTriggerType(new RecordingTriggerType("webhook"))).toThrow(
      /already registered/,
    );
  });

  it("shutdown unregisters every active trigger and forgets parked ones", () => {
    const engine = new Engine();
    const type = new RecordingTriggerType("webhook");
    engine.registerTriggerType(type);
    engine.registerTrigger("w", { type: "webhook", function_id: "c::a", config: {} });
    engine.registerTrigger("w", { type: "parked", function_id: "c::b", config: {} });
    engine.shutdown();
    expect(type.unregistered.map((t) => t.function_id)).toEqual(["c::a"]);
    expect(engine.triggers.list()).toEqual([]);
  });

  it("shutdown withdraws a type's triggers in one call where the type takes many at once", () => {
    const engine = new Engine();
    const batches: string[][] = [];
    const type = Object.assign(new RecordingTriggerType("webhook"), {
      unregisterMany: (records: TriggerRecord[]) => batches.push(records.map((t) => t.function_id)),
    });
    engine.registerTriggerType(type);
    for (const name of ["a", "b", "c"])
      engine.registerTrigger("w", { type: "webhook", function_id: `c::${name}`, config: {} });
    engine.shutdown();
    expect(batches).toEqual([["c::a", "c::b", "c::c"]]);
    expect(type.unregistered).toEqual([]);
    expect(engine.triggers.list()).toEqual([]);
  });
});
