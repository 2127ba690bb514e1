import { describe, expect, it } from "vitest";
import { createEngine, LocalBus } from "../../src/engine/index.ts";

describe("createEngine", () => {
  it("wires the built-in functions and the cron and subscribe trigger types", () => {
    const engine = createEngine();
    try {
      expect(
        engine.functions
          .list()
          .map((fn) => fn.id)
          .sort(),
      ).toEqual([
        "engine::functions::ids",
        "engine::functions::info",
        "engine::functions::list",
        "engine::telemetry",
        "engine::workers::list",
        "publish",
      ]);
      expect(
        engine.triggers
          .listTypes()
          .map((type) => type.id)
          .sort(),
      ).toEqual(["cron", "subscribe"]);
    } finally {
      engine.shutdown();
    }
  });

  it("publishes through the given bus and delivers what arrives on it to subscribers", async () => {
    const bus = new LocalBus();
    const onBus: Array<[string, unknown]> = [];
    bus.onMessage((topic, data) => onBus.push([topic, data]));
    const engine = createEngine({ bus });
    try {
      const received: unknown[] = [];
      engine.registerFunction("t", { id: "t::sub" }, (payload) => {
        received.push(payload);
      });
      engine.registerTrigger("t", { type: "subscribe", function_id: "t::sub", config: { topic: "news" } });
      await engine.trigger({ function_id: "publish", payload: { topic: "news", data: "local" } });
      // A message another node put on the shared bus reaches this node's subscribers too.
      await bus.publish("news", "remote");
      await engine.drain();
      expect(onBus).toEqual([
        ["news", "local"],
        ["news", "remote"],
      ]);
      expect(received).toEqual(["local", "remote"]);
    } finally {
      engine.shutdown();
    }
  });
});
