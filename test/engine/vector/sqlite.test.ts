import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStateStore } from "../../../src/engine/state/sqlite.ts";
import { openVectorIndex } from "../../../src/engine/vector/open.ts";
import { SqliteVectorIndex } from "../../../src/engine/vector/sqlite.ts";
import { vectorIndexContract } from "./contract.ts";
import { uniformVectors } from "./data.ts";

const dir = mkdtempSync(join(tmpdir(), "agentos-vector-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// One file for the whole contract, as in the service; every instance opened on it is another "node".
vectorIndexContract("sqlite", () => new SqliteVectorIndex(join(dir, "vector.db")), 40);

describe("SqliteVectorIndex", () => {
  it("shares the state store's file in the data dir", async () => {
    const dataDir = join(dir, "data");
    const index = await openVectorIndex({ dataDir });
    const store = new SqliteStateStore(join(dataDir, "agentos.db"));
    try {
      expect(index.kind).toBe("sqlite");
      await store.set("s", "k", 1);
      await index.put("memory", "s", "k", Float32Array.of(1, 2), "m");
      expect(await index.count("memory", "s", "m")).toBe(1);
      const tables = store.database
        .prepare(
          "SELECT name FROM sqlite_master WHERE name IN ('state', 'vector_codes', 'vector_data') ORDER BY name",
        )
        .all();
      expect(tables.map((row) => row.name)).toEqual(["state", "vector_codes", "vector_data"]);
    } finally {
      await index.close();
      await store.close();
    }
  });

  it("reloads a scope dropped from a cache too small to hold two", async () => {
    const index = new SqliteVectorIndex(":memory:", { cacheBytes: 1 });
    try {
      const vectors = uniformVectors(50, 16, 3);
      for (const scope of ["a", "b"]) {
        await index.putMany(
          "m",
          scope,
          "m16",
          vectors.map((vector, i) => ({ id: `${scope}${i}`, vector })),
        );
      }
      for (const scope of ["a", "b", "a"]) {
        const [hit] = await index.query("m", scope, vectors[7], { limit: 1, model: "m16" });
        expect(hit.id).toBe(`${scope}7`);
      }
    } finally {
      await index.close();
    }
  });
});
