import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStateStore } from "../../../src/engine/state/sqlite.ts";
import type { CodeSet } from "../../../src/engine/vector/codes.ts";
import { openVectorIndex } from "../../../src/engine/vector/open.ts";
import { CODE_FORMAT, turned } from "../../../src/engine/vector/rotation.ts";
import {
  asymmetricShortlist,
  best,
  hammingDistances,
  hammingShortlist,
  int8Cosine,
  passSizes,
  signCode,
  storedCode,
  unitVector,
} from "../../../src/engine/vector/scan.ts";
import { SqliteVectorIndex } from "../../../src/engine/vector/sqlite.ts";
import { vectorIndexContract } from "./contract.ts";
import { clusteredVectors, sparseVectors, uniformVectors } from "./data.ts";

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

  it("recomputes the codes an older build wrote, once, when the file is opened", async () => {
    const path = join(dir, "older-codes.db");
    const vectors = sparseVectors(900, 64, 41);
    const queries = sparseVectors(10, 64, 42);
    const options = { limit: 5, model: "m64", rescore: 20 };
    const before = new SqliteVectorIndex(path);
    await before.putMany(
      "m",
      "s",
      "m64",
      vectors.map((vector, i) => ({ id: `e${i}`, vector })),
    );
    const answers = [];
    for (const query of queries) answers.push(await before.query("m", "s", query, options));
    await before.close();
    // As a build before CODE_FORMAT 2 left the file: codes of the unturned vectors, no format recorded.
    const db = new DatabaseSync(path);
    const rows = () =>
      db
        .prepare("SELECT c.code, d.vec FROM vector_codes c JOIN vector_data d ON d.rowid = c.rowid")
        .all() as Array<{ code: Uint8Array; vec: Uint8Array }>;
    const older = (vec: Uint8Array) =>
      signCode(Float32Array.from(new Int8Array(vec.buffer, vec.byteOffset, 64)));
    const update = db.prepare("UPDATE vector_codes SET code = ? WHERE rowid = ?");
    for (const row of db.prepare("SELECT rowid, vec FROM vector_data").all() as Array<{
      rowid: number;
      vec: Uint8Array;
    }>)
      update.run(older(row.vec), row.rowid);
    db.exec("DELETE FROM vector_meta");
    const told: number[] = [];
    const after = new SqliteVectorIndex(path, { onCodeUpgrade: (codes) => told.push(codes) });
    try {
      // Told once, before the work; a later open finds nothing to do.
      expect(told).toEqual([900]);
      await new SqliteVectorIndex(path, { onCodeUpgrade: (codes) => told.push(codes) }).close();
      expect(told).toEqual([900]);
      expect(rows().every(({ code, vec }) => Buffer.from(code).equals(Buffer.from(storedCode(vec))))).toBe(
        true,
      );
      expect(db.prepare("SELECT value FROM vector_meta WHERE name = 'code_format'").get()).toEqual({
        value: CODE_FORMAT,
      });
      for (const [i, query] of queries.entries()) {
        expect(await after.query("m", "s", query, options)).toEqual(answers[i]);
      }
    } finally {
      db.close();
      await after.close();
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

  it("answers as the JavaScript passes and one read per shortlisted vector do", async () => {
    const path = join(dir, "same-answers.db");
    const index = new SqliteVectorIndex(path);
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const dims = 96;
      const vectors = clusteredVectors(3000, dims, 40, 21);
      for (let at = 0; at < vectors.length; at += 500) {
        const batch = vectors.slice(at, at + 500).map((vector, i) => ({ id: `e${at + i}`, vector }));
        await index.putMany("m", "s", "m96", batch);
      }
      const read = db.prepare("SELECT vec FROM vector_data WHERE rowid = ?");
      const options = { limit: 10, model: "m96", rescore: 40 };
      for (const query of uniformVectors(20, dims, 22).concat(vectors.slice(0, 20))) {
        const got = await index.query("m", "s", query, options);
        // The scope's cached codes, in their slot order (ties at a cut-off go to the lowest slot).
        const set = (index as unknown as { current(...key: string[]): CodeSet }).current("m", "s", "m96");
        const codes = set.codes.subarray(0, set.count * set.words);
        const unit = unitVector(query);
        const sizes = passSizes(options.limit, options.rescore);
        // Stored codes are of turned vectors (rotation.ts): the query is turned for both passes.
        const code = new Uint32Array(signCode(turned(unit)).buffer);
        const distances = hammingDistances(codes, set.count, set.words, code);
        const first = hammingShortlist(distances, set.words * 32, sizes.hamming);
        const slots = asymmetricShortlist(codes, set.words, turned(unit), first, sizes.rescore);
        const hits = [...slots].map((slot) => {
          const row = read.get(set.refs[slot]) as { vec: Uint8Array };
          return { id: set.ids[slot], score: int8Cosine(unit, row.vec) };
        });
        expect(got).toEqual(best(hits, options.limit));
      }
    } finally {
      db.close();
      await index.close();
    }
  });
});
