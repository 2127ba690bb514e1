import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Engine } from "../../../src/engine/engine.ts";
import { searchClient } from "../../../src/engine/search/client.ts";
import { registerSearchFunctions } from "../../../src/engine/search/functions.ts";
import { openTextIndex } from "../../../src/engine/search/open.ts";
import { vectorClient } from "../../../src/engine/vector/client.ts";
import { registerVectorFunctions } from "../../../src/engine/vector/functions.ts";
import { openVectorIndex } from "../../../src/engine/vector/open.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { dropSchema, findTestPostgres, uniqueSchema } from "../state/contract.ts";

const postgres = await findTestPostgres();
if (postgres.url === null) console.warn(`Skipping PostgreSQL vector functions: ${postgres.reason}`);
const schema = uniqueSchema();
const dir = mkdtempSync(join(tmpdir(), "agentos-vector-fn-"));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (postgres.url) await dropSchema(postgres.url, schema);
});

const backends = [
  { name: "SQLite", databaseUrl: undefined as string | undefined },
  ...(postgres.url ? [{ name: "PostgreSQL", databaseUrl: postgres.url }] : []),
];

describe.each(backends)("vector::* and search::get|count on $name", ({ databaseUrl }) => {
  const open = async () => {
    const dataDir = mkdtempSync(join(dir, "data-"));
    const options = { databaseUrl, dataDir, schema };
    const text = await openTextIndex(options);
    const vectors = await openVectorIndex(options);
    const engine = new Engine();
    registerSearchFunctions(engine, text);
    registerVectorFunctions(engine, vectors);
    const trigger = (request: Parameters<Engine["trigger"]>[0]) => engine.trigger(request);
    return {
      engine,
      vector: vectorClient(trigger),
      search: searchClient(trigger),
      close: async () => {
        await vectors.close();
        await text.close();
      },
    };
  };

  it("stores vectors as numbers, queries, counts, finds the missing and deletes", async () => {
    const { vector, close } = await open();
    try {
      const scope = `s-${Math.random()}`;
      expect(
        await vector.putMany("memory", scope, "m1", [
          { id: "a", vector: [1, 0, 0] },
          { id: "b", vector: Float32Array.of(0.6, 0.8, 0) },
          { id: "c", vector: [0, 0, 1] },
        ]),
      ).toEqual({ stored: 3 });
      const { results } = await vector.query("memory", scope, [1, 0.1, 0], { model: "m1", limit: 2 });
      expect(results.map((hit) => hit.id)).toEqual(["a", "b"]);
      expect(results[0]?.score).toBeCloseTo(0.995, 2);
      expect(await vector.count("memory", scope, "m1")).toBe(3);
      expect(await vector.count("memory", scope, "m2")).toBe(0);
      expect(await vector.missing("memory", scope, "m1", ["x", "a", "y", "c"])).toEqual(["x", "y"]);
      expect(await vector.delete("memory", scope, "a")).toEqual({ deleted: true });
      expect(await vector.delete("memory", scope, "a")).toEqual({ deleted: false });
      expect(await vector.deleteScope("memory", scope)).toEqual({ deleted: 2 });
      expect(await vector.count("memory", scope)).toBe(0);
    } finally {
      await close();
    }
  });

  it("reads documents by id and counts a scope's documents", async () => {
    const { search, close } = await open();
    try {
      const scope = `d-${Math.random()}`;
      await search.putMany("memory", scope, [
        { id: "one", text: "first", data: { n: 1 }, createdAt: "2025-01-01T00:00:00.000Z" },
        { id: "two", text: "second", data: { n: 2 } },
      ]);
      const items = await search.get<{ n: number }>("memory", scope, ["two", "nope", "one"]);
      expect(items.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        { id: "one", data: { n: 1 }, createdAt: "2025-01-01T00:00:00.000Z" },
        { id: "two", data: { n: 2 }, createdAt: expect.any(String) },
      ]);
      expect(await search.get("memory", scope, [])).toEqual([]);
      expect(await search.count("memory", scope)).toBe(2);
      expect(await search.count("memory", "empty")).toBe(0);
    } finally {
      await close();
    }
  });

  it.each([
    ["vector::put_many", { index: "i", scope: "s", model: "m", entries: [] }, "entries"],
    [
      "vector::put_many",
      { index: "i", scope: "s", model: "m", entries: [{ id: "a", vector: [] }] },
      "entries.0.vector",
    ],
    ["vector::put_many", { index: "i", scope: "s", model: "", entries: [{ id: "a", vector: [1] }] }, "model"],
    ["vector::query", { index: "i", scope: "s", model: "m", vector: [1], limit: 0 }, "limit"],
    ["vector::query", { index: "i", scope: "s", model: "m", vector: ["x"] }, "vector.0"],
    ["vector::missing", { index: "i", scope: "s", model: "m", ids: Array(1001).fill("a") }, "ids"],
    ["vector::delete", { index: "i", scope: "s" }, "id"],
    ["search::get", { index: "i", scope: "s", ids: [""] }, "ids.0"],
  ])("%s rejects %j as a validation error naming %s", async (functionId, payload, field) => {
    const { engine, close } = await open();
    try {
      const error = await engine.trigger({ function_id: functionId, payload }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("validation");
      expect((error as AppError).message.startsWith(`${field}:`)).toBe(true);
    } finally {
      await close();
    }
  });

  it("refuses an id longer than 1024 bytes as a 400 naming it, and stores the longest allowed", async () => {
    const { vector, close } = await open();
    // Distinct three-byte characters: 1024 of them made PostgreSQL's primary-key entry too large.
    const cjk = (length: number, from: number) =>
      Array.from({ length }, (_, i) => String.fromCodePoint(0x4e00 + ((from + i * 7919) % 20000))).join("");
    const [name, scope] = [cjk(256, 0), cjk(256, 1)];
    try {
      const error = await vector
        .putMany(name, scope, "m2", [{ id: cjk(1024, 2), vector: [1, 2] }])
        .catch((e: unknown) => e);
      expect((error as AppError).code).toBe("validation");
      expect((error as AppError).message).toMatch(/id must be at most 1024 bytes/);
      await vector.putMany(name, scope, "m2", [{ id: `${cjk(341, 3)}a`, vector: [1, 2] }]);
      expect(await vector.count(name, scope)).toBe(1);
    } finally {
      await close();
    }
  });

  it("refuses a vector of another length than the model's, as a 400 naming it", async () => {
    const { vector, close } = await open();
    try {
      await vector.putMany("memory", "dims", "m3", [{ id: "a", vector: [1, 2, 3] }]);
      const error = await vector
        .putMany("memory", "dims", "m3", [{ id: "b", vector: [1, 2] }])
        .catch((e: unknown) => e);
      expect((error as AppError).code).toBe("validation");
      expect((error as AppError).message).toMatch(/length|dimension/);
    } finally {
      await close();
    }
  });
});
