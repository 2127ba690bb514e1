import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Engine } from "../../../src/engine/engine.ts";
import { LocalBus } from "../../../src/engine/trigger-types/subscribe.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { createCapturingLogger, createTestEngine } from "../../helpers/engine.ts";

let engine: Engine;

afterEach(() => engine?.shutdown());

/** Registers a function that records its payloads and subscribes it to `topic`. */
function subscriber(id: string, topic: string): { received: unknown[]; unregister(): void } {
  const received: unknown[] = [];
  engine.registerFunction("sub", { id }, (payload) => {
    received.push(payload);
  });
  const handle = engine.registerTrigger("sub", { type: "subscribe", function_id: id, config: { topic } });
  return { received, unregister: handle.unregister };
}

async function publish(topic: string, data: unknown): Promise<unknown> {
  const result = await engine.trigger({ function_id: "publish", payload: { topic, data } });
  await engine.drain();
  return result;
}

describe("publish and subscribe", () => {
  it("delivers data to every subscriber of the topic as its payload, and to no subscriber of another topic", async () => {
    engine = createTestEngine();
    const a1 = subscriber("sub::a1", "orders.created");
    const a2 = subscriber("sub::a2", "orders.created");
    const other = subscriber("sub::other", "orders.deleted");
    const result = await publish("orders.created", { id: 7, items: ["x"] });
    expect(result).toBeUndefined();
    expect(a1.received).toEqual([{ id: 7, items: ["x"] }]);
    expect(a2.received).toEqual([{ id: 7, items: ["x"] }]);
    expect(other.received).toEqual([]);
  });

  it("delivers any JSON data unchanged, including primitives", async () => {
    engine = createTestEngine();
    const s = subscriber("sub::any", "t");
    for (const data of ["text", 42, true, [1, 2], { nested: { deep: null } }]) await publish("t", data);
    expect(s.received).toEqual(["text", 42, true, [1, 2], { nested: { deep: null } }]);
  });

  it("publishing to a topic nobody subscribes to succeeds", async () => {
    engine = createTestEngine();
    await expect(publish("nobody.listens", 1)).resolves.toBeUndefined();
  });

  it("validates the delivered data against the subscriber's input schema", async () => {
    const { logger, entries } = createCapturingLogger();
    engine = createTestEngine({ logger });
    const received: unknown[] = [];
    engine.registerFunction("sub", { id: "sub::typed", input: z.object({ n: z.number() }) }, (payload) => {
      received.push(payload);
    });
    engine.registerTrigger("sub", { type: "subscribe", function_id: "sub::typed", config: { topic: "t" } });
    await publish("t", { n: 1 });
    await publish("t", { n: "not a number" });
    expect(received).toEqual([{ n: 1 }]);
    expect(
      entries.some((e) => e.msg === "fire-and-forget invocation failed" && e.functionId === "sub::typed"),
    ).toBe(true);
  });

  it("a failing subscriber neither fails the publish nor keeps the message from the others", async () => {
    engine = createTestEngine();
    engine.registerFunction("sub", { id: "sub::broken" }, () => {
      throw new Error("boom");
    });
    engine.registerTrigger("sub", { type: "subscribe", function_id: "sub::broken", config: { topic: "t" } });
    const ok = subscriber("sub::ok", "t");
    await expect(publish("t", "hello")).resolves.toBeUndefined();
    expect(ok.received).toEqual(["hello"]);
  });

  it("unregistering one subscriber stops its deliveries and keeps the other subscribers of the topic", async () => {
    engine = createTestEngine();
    const gone = subscriber("sub::gone", "t");
    const stays = subscriber("sub::stays", "t");
    await publish("t", 1);
    gone.unregister();
    await publish("t", 2);
    expect(gone.received).toEqual([1]);
    expect(stays.received).toEqual([1, 2]);
  });

  it("a subscriber that re-registers its own subscription during delivery gets each message once", async () => {
    engine = createTestEngine();
    const received: unknown[] = [];
    engine.registerFunction("sub", { id: "sub::again" }, (payload) => {
      received.push(payload);
      if (received.length > 10) return; // without a bound, a regression would loop forever
      engine.registerTrigger("sub", {
        id: "again",
        type: "subscribe",
        function_id: "sub::again",
        config: { topic: "t" },
      });
    });
    engine.registerTrigger("sub", {
      id: "again",
      type: "subscribe",
      function_id: "sub::again",
      config: { topic: "t" },
    });
    await publish("t", "first");
    await publish("t", "second");
    expect(received).toEqual(["first", "second"]);
  });

  it("a subscription made during a delivery does not receive the message being delivered", async () => {
    engine = createTestEngine();
    const late: unknown[] = [];
    engine.registerFunction("sub", { id: "sub::late" }, (payload) => {
      late.push(payload);
    });
    let subscribed = false;
    engine.registerFunction("sub", { id: "sub::recruiter" }, () => {
      if (subscribed) return;
      subscribed = true;
      engine.registerTrigger("sub", { type: "subscribe", function_id: "sub::late", config: { topic: "t" } });
    });
    engine.registerTrigger("sub", {
      type: "subscribe",
      function_id: "sub::recruiter",
      config: { topic: "t" },
    });
    await publish("t", 1);
    await publish("t", 2);
    expect(late).toEqual([2]);
  });
});

describe("publish input", () => {
  it("refuses an empty topic with a validation error naming the topic", async () => {
    engine = createTestEngine();
    await expect(
      engine.trigger({ function_id: "publish", payload: { topic: "", data: 1 } }),
    ).rejects.toMatchObject({
      code: "validation",
      message: expect.stringContaining("topic"),
    });
  });

  it("refuses a missing topic", async () => {
    engine = createTestEngine();
    await expect(engine.trigger({ function_id: "publish", payload: { data: 1 } })).rejects.toMatchObject({
      code: "validation",
      message: expect.stringContaining("topic"),
    });
  });
});

describe("subscribe trigger configuration", () => {
  it("refuses an empty or missing topic with a validation error naming the topic", () => {
    engine = createTestEngine();
    for (const config of [{ topic: "" }, {}, { topic: 5 }, null]) {
      let thrown: unknown;
      try {
        engine.registerTrigger("sub", { type: "subscribe", function_id: "sub::x", config });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(config)).toBeInstanceOf(AppError);
      expect((thrown as AppError).code).toBe("validation");
      expect((thrown as AppError).message).toMatch(/topic|expected object/);
    }
    expect(engine.triggers.list()).toEqual([]);
  });
});

describe("LocalBus", () => {
  it("hands every published message to every listener, and to none after close", async () => {
    const bus = new LocalBus();
    const seen: Array<[string, unknown]> = [];
    bus.onMessage((topic, data) => seen.push([topic, data]));
    bus.onMessage((topic) => seen.push([`second ${topic}`, null]));
    await bus.publish("a", { x: 1 });
    await bus.close();
    await bus.publish("b", 2);
    expect(seen).toEqual([
      ["a", { x: 1 }],
      ["second a", null],
    ]);
  });
});
