import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine/engine.ts";
import { createTestEngine } from "../helpers/engine.ts";

type FunctionsList = {
  functions: Array<{ function_id: string; worker_name: string; description?: string; metadata?: unknown }>;
};
type WorkersList = {
  workers: Array<{ name: string; function_count: number; isolation: string; runtime: string }>;
};

let engine: Engine;

afterEach(() => engine?.shutdown());

function listFunctions(payload?: unknown): Promise<FunctionsList> {
  return engine.trigger({ function_id: "engine::functions::list", payload }) as Promise<FunctionsList>;
}

function registerSample(): void {
  engine = createTestEngine();
  const alpha = engine.worker("alpha");
  alpha.registerFunction({ id: "alpha::two", description: "second" }, () => 2);
  alpha.registerFunction({ id: "alpha::one", description: "first", metadata: { tags: ["x"] } }, () => 1);
  alpha.registerFunction({ id: "alpha::hidden", metadata: { internal: true } }, () => 0);
  engine.worker("beta").registerFunction({ id: "beta::x" }, () => "x");
}

describe("engine::functions::list", () => {
  it("lists functions sorted by id with their worker, description and metadata", async () => {
    registerSample();
    const { functions } = await listFunctions();
    expect(functions.map((fn) => fn.function_id)).toEqual(["alpha::one", "alpha::two", "beta::x", "publish"]);
    expect(functions[0]).toEqual({
      function_id: "alpha::one",
      worker_name: "alpha",
      description: "first",
      metadata: { tags: ["x"] },
    });
    expect(functions.find((fn) => fn.function_id === "publish")?.worker_name).toBe("engine");
  });

  it("hides engine::* functions and functions marked internal unless include_internal is set", async () => {
    registerSample();
    const visible = (await listFunctions({})).functions.map((fn) => fn.function_id);
    expect(visible.some((id) => id.startsWith("engine::"))).toBe(false);
    expect(visible).not.toContain("alpha::hidden");
    const all = (await listFunctions({ include_internal: true })).functions.map((fn) => fn.function_id);
    expect(all).toEqual(
      expect.arrayContaining([
        "engine::functions::list",
        "engine::workers::list",
        "alpha::hidden",
        "publish",
      ]),
    );
  });

  it("keeps only ids starting with the prefix", async () => {
    registerSample();
    const { functions } = await listFunctions({ prefix: "alpha::" });
    expect(functions.map((fn) => fn.function_id)).toEqual(["alpha::one", "alpha::two"]);
    const internal = await listFunctions({ prefix: "engine::", include_internal: true });
    expect(internal.functions.map((fn) => fn.function_id)).toEqual([
      "engine::functions::ids",
      "engine::functions::info",
      "engine::functions::list",
      "engine::telemetry",
      "engine::workers::list",
    ]);
    expect((await listFunctions({ prefix: "engine::" })).functions).toEqual([]);
  });

  it("refuses unknown options with a validation error", async () => {
    registerSample();
    await expect(listFunctions({ prefx: "a" })).rejects.toMatchObject({ code: "validation" });
    await expect(listFunctions({ include_internal: "yes" })).rejects.toMatchObject({
      code: "validation",
      message: expect.stringContaining("include_internal"),
    });
  });
});

describe("engine::functions::ids", () => {
  const ids = async () =>
    ((await engine.trigger({ function_id: "engine::functions::ids", payload: {} })) as { ids: string[] }).ids;

  it("names exactly what the listing names, sorted, and follows registrations", async () => {
    registerSample();
    const listed = (await listFunctions({})).functions.map((fn) => fn.function_id);
    expect(await ids()).toEqual(listed);
    engine.unregisterFunction("beta::x");
    expect(await ids()).toEqual(listed.filter((id) => id !== "beta::x"));
  });
});

describe("engine::workers::list", () => {
  it("lists every worker sorted by name with how many functions it owns", async () => {
    registerSample();
    const { workers } = (await engine.trigger({ function_id: "engine::workers::list" })) as WorkersList;
    expect(workers.map((w) => [w.name, w.function_count])).toEqual([
      ["alpha", 3],
      ["beta", 1],
      ["engine", 6],
    ]);
    expect(workers[0]).toMatchObject({ isolation: "in-process", runtime: "engine", status: "available" });
  });

  it("follows unregistration", async () => {
    registerSample();
    engine.unregisterFunction("beta::x");
    const { workers } = (await engine.trigger({
      function_id: "engine::workers::list",
      payload: {},
    })) as WorkersList;
    expect(workers.find((w) => w.name === "beta")?.function_count).toBe(0);
  });
});

describe("engine::functions::info", () => {
  it("gives a function's input as JSON Schema, and 404 for an unknown id", async () => {
    const { z } = await import("zod");
    const engine = createTestEngine();
    engine
      .worker("alpha")
      .registerFunction(
        { id: "alpha::greet", description: "Greets", input: z.strictObject({ name: z.string() }) },
        () => null,
      );
    const info = (await engine.trigger({
      function_id: "engine::functions::info",
      payload: { function_id: "alpha::greet" },
    })) as {
      request_schema: { properties: Record<string, unknown>; required: string[] };
    };
    expect(info).toMatchObject({ function_id: "alpha::greet", worker_name: "alpha", description: "Greets" });
    expect(info.request_schema.properties).toEqual({ name: { type: "string" } });
    expect(info.request_schema.required).toEqual(["name"]);
    await expect(
      engine.trigger({ function_id: "engine::functions::info", payload: { function_id: "nope::x" } }),
    ).rejects.toMatchObject({ status: 404 });
  });
});
