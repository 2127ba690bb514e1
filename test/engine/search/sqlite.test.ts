import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openTextIndex } from "../../../src/engine/search/open.ts";
import { SqliteTextIndex } from "../../../src/engine/search/sqlite.ts";
import { SqliteStateStore } from "../../../src/engine/state/sqlite.ts";
import { textIndexContract } from "./contract.ts";

const dir = mkdtempSync(join(tmpdir(), "agentos-search-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// One file for the whole contract (as in the service, where every scope shares the table).
textIndexContract("sqlite", () => new SqliteTextIndex(join(dir, "search.db")), 300);

describe("SqliteTextIndex", () => {
  it("shares the state store's file in the data dir, each on its own connection", async () => {
    const dataDir = join(dir, "data");
    // Whichever opens first creates the file, owner-only.
    const index = await openTextIndex({ dataDir });
    const store = new SqliteStateStore(join(dataDir, "agentos.db"));
    try {
      expect(index.kind).toBe("sqlite");
      expect(statSync(join(dataDir, "agentos.db")).mode & 0o777).toBe(0o600);
      await store.set("s", "k", 1);
      await index.put("memory", "s", "k", {
        text: "shared file",
        data: 1,
        createdAt: new Date().toISOString(),
      });
      expect((await store.get("s", "k"))?.value).toBe(1);
      expect(await index.count("memory", "s")).toBe(1);
      const tables = store.database
        .prepare(
          "SELECT name FROM sqlite_master WHERE name IN ('state', 'search_docs', 'search_fts') ORDER BY name",
        )
        .all();
      expect(tables.map((row) => row.name)).toEqual(["search_docs", "search_fts", "state"]);
    } finally {
      await index.close();
      await store.close();
    }
  });

  it("keeps documents created in the same millisecond apart, the later written first", async () => {
    const index = new SqliteTextIndex(join(dir, "same-ms.db"));
    try {
      const createdAt = "2025-06-01T12:00:00.000Z";
      // More other entries, so "words" is in under half the scope: not too common to rank by.
      for (let i = 0; i < 301; i++)
        await index.put("m", "s", `f${i}`, { text: "filler", data: null, createdAt });
      for (let i = 0; i < 300; i++)
        await index.put("m", "s", `d${i}`, { text: "same words", data: i, createdAt });
      expect(await index.count("m", "s")).toBe(601);
      const hits = await index.search("m", "s", "words", { limit: 200 });
      expect(hits.map((hit) => hit.data)).toEqual(Array.from({ length: 200 }, (_, i) => 299 - i));
      // Replacing moves a document to the slot of its new creation time.
      await index.put("m", "s", "d0", {
        text: "same words",
        data: "moved",
        createdAt: "2025-06-02T00:00:00.000Z",
      });
      expect((await index.search("m", "s", "words", { limit: 1 }))[0].data).toBe("moved");
      expect(await index.count("m", "s")).toBe(601);
    } finally {
      await index.close();
    }
  });

  it("ranks exactly as ranking every match does, whether it scans newest first or falls back", async () => {
    // The same corpus in three indexes: always rank all; always scan (settles early); scan with a
    // budget too small to settle (falls back to ranking the older rest and merges).
    const variants = [
      new SqliteTextIndex(":memory:", { rankAllBelow: Number.MAX_SAFE_INTEGER }),
      new SqliteTextIndex(":memory:", { rankAllBelow: 0 }),
      new SqliteTextIndex(":memory:", { rankAllBelow: 0, scanBudget: 7 }),
    ];
    const words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron".split(
      " ",
    );
    let seed = 7;
    const pick = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return words[seed % words.length];
    };
    const start = Date.parse("2025-01-01T00:00:00.000Z");
    try {
      for (let i = 0; i < 3000; i++) {
        const text = Array.from({ length: 3 + (i % 9) }, pick).join(" ");
        const createdAt = new Date(start + i * 3_600_000).toISOString();
        const otherText = `${text} ${pick()}`;
        for (const index of variants) {
          await index.put("m", "s", `d${i}`, { text, data: i, createdAt });
          // Another scope on the same table, so that term statistics are not the scope's alone.
          if (i % 3 === 0) await index.put("m", "other", `d${i}`, { text: otherText, data: i, createdAt });
        }
      }
      for (const query of ["alpha", "beta gamma", "kappa lambda mu nu", "xi omicron alpha beta gamma"]) {
        for (const limit of [1, 10, 50]) {
          for (const recencyHalfLifeMs of [undefined, 3_600_000, 1e12]) {
            const [expected, ...others] = await Promise.all(
              variants.map((index) => index.search("m", "s", query, { limit, recencyHalfLifeMs })),
            );
            expect(expected).toHaveLength(limit);
            for (const actual of others) {
              // The same hits in the same order; bm25() may differ in the last bits between the two reads.
              expect(actual.map((hit) => hit.id)).toEqual(expected.map((hit) => hit.id));
              for (const [i, hit] of actual.entries()) expect(hit.score).toBeCloseTo(expected[i].score, 9);
            }
          }
        }
      }
    } finally {
      for (const index of variants) await index.close();
    }
  });

  it("places documents created before 2020 or far in the future", async () => {
    const index = new SqliteTextIndex(":memory:");
    try {
      for (const [id, createdAt] of [
        ["past", "1999-12-31T23:59:59.000Z"],
        ["past2", "1970-01-01T00:00:00.000Z"],
        ["future", "2300-01-01T00:00:00.000Z"],
        ["future2", "2400-01-01T00:00:00.000Z"],
      ]) {
        await index.put("m", "s", id, { text: "time travel", data: id, createdAt });
      }
      const hits = await index.search("m", "s", "travel", { limit: 10 });
      expect(hits.map((hit) => hit.id).sort()).toEqual(["future", "future2", "past", "past2"]);
      expect(hits.slice(0, 2).map((hit) => hit.createdAt)).toEqual([
        "2400-01-01T00:00:00.000Z",
        "2300-01-01T00:00:00.000Z",
      ]);
    } finally {
      await index.close();
    }
  });
});
