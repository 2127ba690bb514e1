import { describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.ts";
import { FunctionRegistry } from "../../src/engine/function-registry.ts";
import { AppError } from "../../src/shared/errors.ts";

describe("function registry (through the engine)", () => {
  it("re-registering an id replaces the handler and its owner", async () => {
    const engine = new Engine();
    engine.worker("first");
    engine.worker("second");
    engine.registerFunction("first", { id: "t::fn" }, () => "first");
    engine.registerFunction("second", { id: "t::fn" }, () => "second");
    await expect(engine.trigger({ function_id: "t::fn" })).resolves.toBe("second");
    expect(engine.functions.get("t::fn")?.worker).toBe("second");
    expect(engine.functions.list().filter((fn) => fn.id === "t::fn")).toHaveLength(1);
    const counts = Object.fromEntries(engine.listWorkers().map((w) => [w.name, w.function_count]));
    expect(counts).toEqual({ first: 0, second: 1 });
  });

  it("forgets a worker's count once its last function is gone (remote workers come and go)", () => {
    const registry = new FunctionRegistry();
    const fn = { id: "t::fn", worker: "conn-1", handler: () => null };
    registry.add(fn);
    registry.add({ ...fn, id: "t::other" });
    registry.remove("t::fn");
    expect(registry.countByWorker("conn-1")).toBe(1);
    registry.remove("t::other");
    expect(registry.countByWorker("conn-1")).toBe(0);
    expect(registry.workerKeys()).toEqual([]);
  });

  it("refuses invalid function ids with a validation error", () => {
    const engine = new Engine();
    for (const id of ["", "has space", "a/b", "emoji::😀", "tab\tid", "x".repeat(257)]) {
      let thrown: unknown;
      try {
        engine.registerFunction("t", { id }, () => null);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, `id ${JSON.stringify(id)}`).toBeInstanceOf(AppError);
      expect((thrown as AppError).code).toBe("validation");
      expect(engine.functions.get(id)).toBeUndefined();
    }
  });

  it("accepts ids made of letters, digits and _ . - :", () => {
    const engine = new Engine();
    for (const id of ["publish", "a::b", "tool::web_fetch", "x.y-z::v1", "x".repeat(256)]) {
      engine.registerFunction("t", { id }, () => null);
      expect(engine.functions.get(id)?.id).toBe(id);
    }
  });

  it("an unregistered function is no longer callable", async () => {
    const engine = new Engine();
    engine.registerFunction("t", { id: "t::gone" }, () => "here");
    expect(engine.unregisterFunction("t::gone")).toBe(true);
    expect(engine.unregisterFunction("t::gone")).toBe(false);
    await expect(engine.trigger({ function_id: "t::gone" })).rejects.toMatchObject({ code: "not_found" });
  });

  it("lists functions sorted by id", () => {
    const engine = new Engine();
    for (const id of ["b::x", "a::z", "a::b", "B::a"]) engine.registerFunction("t", { id }, () => null);
    expect(engine.functions.list().map((fn) => fn.id)).toEqual(["B::a", "a::b", "a::z", "b::x"]);
  });
});
