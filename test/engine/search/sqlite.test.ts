import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { openTextIndex } from "../../../src/engine/search/open.ts";
import { SqliteTextIndex } from "../../../src/engine/search/sqlite.ts";
import { SqliteStateStore } from "../../../src/engine/state/sqlite.ts";
import { setClock } from "../../../src/shared/clock.ts";
import { textIndexContract } from "./contract.ts";

const dir = mkdtempSync(join(tmpdir(), "agentos-search-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// One file for the whole contract (as in the service, where every scope shares the table).
textIndexContract("sqlite", () => new SqliteTextIndex(join(dir, "search.db")), 300);
// Where the ranking extension is not built, FTS5's bm25() ranks: the same contract holds.
textIndexContract(
  "sqlite, ranked by bm25()",
  () => new SqliteTextIndex(join(dir, "bm25.db"), { native: false }),
  300,
);

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
      new SqliteTextIndex(":memory:", { exhaustive: true }),
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

  it("ranks random Zipf corpora exactly as ranking every match does (pruning, cut-off, cached counts)", async () => {
    // Property: on random corpora whose commonest words are in a large part of the entries (as in an
    // agent's memory), every pruned ranking gives the same hits, in the same order, as ranking every
    // match; also after deletes and replacements (the cached posting counts must not outlive them).
    const vocabulary = Array.from({ length: 60 }, (_, i) => `w${i.toString(36)}x`);
    for (const seed of [1, 2, 3, 4, 5]) {
      let state = seed * 7919;
      const next = () => {
        state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
        return state / 0x80000000;
      };
      // Zipf: the word of rank r with probability ∝ 1 / r.
      const weights = vocabulary.map((_, r) => 1 / (r + 1));
      const total = weights.reduce((sum, w) => sum + w, 0);
      const word = () => {
        let target = next() * total;
        for (const [r, w] of weights.entries()) {
          target -= w;
          if (target <= 0) return vocabulary[r];
        }
        return vocabulary[vocabulary.length - 1];
      };
      const text = () => Array.from({ length: 2 + Math.floor(next() * 12) }, word).join(" ");
      const file = join(dir, `zipf-${seed}.db`);
      const exact = new SqliteTextIndex(file, { exhaustive: true });
      const pruned = [
        new SqliteTextIndex(file, { rankAllBelow: 0, scanBudget: 1 + Math.floor(next() * 40) }),
        new SqliteTextIndex(file, { rankAllBelow: 0, scanBudget: 200 }),
        new SqliteTextIndex(file),
      ];
      const now = Date.parse("2025-06-01T00:00:00.000Z");
      const span = (1 + Math.floor(next() * 5)) * 30 * 24 * 3_600_000;
      const createdAt = () => new Date(now - Math.floor(next() * span)).toISOString();
      setClock({ now: () => now });
      try {
        const size = 400 + Math.floor(next() * 800);
        for (let i = 0; i < size; i += 100) {
          const docs = Array.from({ length: Math.min(100, size - i) }, (_, j) => ({
            id: `d${i + j}`,
            doc: { text: text(), data: i + j, createdAt: createdAt() },
          }));
          await exact.putMany("m", "s", docs);
          if (i % 300 === 0) await exact.putMany("m", "other", docs);
        }
        const check = async () => {
          for (let q = 0; q < 12; q++) {
            const query = Array.from({ length: 1 + Math.floor(next() * 4) }, word).join(" ");
            const limit = [1, 3, 10, 25][q % 4];
            const recencyHalfLifeMs = [undefined, 3_600_000, 7 * 24 * 3_600_000, 1e12][Math.floor(q / 3)];
            const expected = await exact.search("m", "s", query, { limit, recencyHalfLifeMs });
            for (const index of pruned) {
              const actual = await index.search("m", "s", query, { limit, recencyHalfLifeMs });
              expect(
                actual.map((hit) => hit.id),
                `seed ${seed}, "${query}", limit ${limit}`,
              ).toEqual(expected.map((hit) => hit.id));
            }
          }
        };
        await check();
        // Deletes and replacements through one index, searches through the others (same file).
        for (let i = 0; i < size; i += 3) await exact.delete("m", "s", `d${i}`);
        for (let i = 1; i < size; i += 7)
          await pruned[0].put("m", "s", `d${i}`, { text: text(), data: i, createdAt: createdAt() });
        await check();
        await pruned[1].deleteScope("m", "other");
        await check();
      } finally {
        setClock(null);
        await exact.close();
        for (const index of pruned) await index.close();
      }
    }
  });

  it("ranks a candidate list from the newest matches and the older ones holding a rare word", async () => {
    const file = join(dir, "candidates.db");
    const exact = new SqliteTextIndex(file, { exhaustive: true });
    // Scans 8 matches newest first; phrases in more than 50 documents of the table are not rare.
    const bounded = new SqliteTextIndex(file, { rankAllBelow: 0, candidateScan: 8, rarePostings: 50 });
    const now = Date.parse("2025-06-01T00:00:00.000Z");
    const at = (daysAgo: number) => new Date(now - daysAgo * 86_400_000).toISOString();
    setClock({ now: () => now });
    try {
      // Old and short, so the most relevant: one of a common word only, one also holding a rare word.
      await exact.put("m", "s", "old-common", { text: "meeting meeting", data: 0, createdAt: at(300) });
      await exact.put("m", "s", "old-rare", { text: "meeting zebra", data: 0, createdAt: at(299) });
      for (let i = 0; i < 200; i++)
        await exact.put("m", "s", `new${i}`, {
          text: `meeting notes about the weekly plan and the team number ${i}`,
          data: i,
          createdAt: at(200 - i),
        });
      const search = (index: SqliteTextIndex, query: string, candidates?: boolean) =>
        index.search("m", "s", query, { limit: 3, candidates });
      const ids = (hits: Array<{ id: string }>) => hits.map((hit) => hit.id);

      const all = await search(exact, "meeting");
      expect(ids(all)[0]).toBe("old-common");
      // The older matches of a common word alone are not ranked: the newest ones stand in.
      const candidates = await search(bounded, "meeting", true);
      expect(ids(candidates)).not.toContain("old-common");
      expect(ids(candidates)).toContain("new199");
      // Those holding a rare word are, with the scores a full ranking gives them.
      const rare = await search(bounded, "meeting zebra", true);
      const rareAll = await search(exact, "meeting zebra");
      expect(ids(rare)[0]).toBe("old-rare");
      expect(rare[0].score).toBeCloseTo(rareAll[0].score, 9);
      // Not asked for candidates, the same index ranks every match.
      expect(ids(await search(bounded, "meeting"))).toEqual(ids(all));
    } finally {
      setClock(null);
      await exact.close();
      await bounded.close();
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

  it("reuses the numbers of deleted scopes once every number was given out, so clearing and refilling never runs out", async () => {
    const file = join(dir, "scope-numbers.db");
    const index = new SqliteTextIndex(file);
    const at = new Date().toISOString();
    try {
      await index.put("memory", "victim", "v", { text: "victim note", data: "victim", createdAt: at });
      // As after ~4 million scopes made and forgotten (an agent's memory cleared and refilled, say):
      // the number sequence (2^22 scopes over the file's life) is spent though two scopes are live.
      const raw = new DatabaseSync(file);
      raw.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'search_scopes'").run(2 ** 22 - 3);
      raw.close();
      for (let round = 0; round < 6; round++) {
        const scope = `churn-${round}`;
        await index.put("memory", scope, "c", { text: "churn note", data: scope, createdAt: at });
        expect((await index.search("memory", scope, "note", { limit: 10 })).map((hit) => hit.data)).toEqual([
          scope,
        ]);
        expect(await index.deleteScope("memory", scope)).toBe(1);
      }
      await index.put("memory", "newcomer", "n", { text: "newcomer note", data: "newcomer", createdAt: at });
      expect(
        (await index.search("memory", "newcomer", "note", { limit: 10 })).map((hit) => hit.data),
      ).toEqual(["newcomer"]);
      expect((await index.search("memory", "victim", "note", { limit: 10 })).map((hit) => hit.data)).toEqual([
        "victim",
      ]);
      expect((await index.list("memory", "victim", { limit: 10 })).items.map((item) => item.data)).toEqual([
        "victim",
      ]);
    } finally {
      await index.close();
    }
  });
});
