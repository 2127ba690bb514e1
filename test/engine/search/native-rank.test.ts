import { DatabaseSync } from "node:sqlite";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SqliteTextIndex } from "../../../src/engine/search/sqlite.ts";
import { SqliteStateStore } from "../../../src/engine/state/sqlite.ts";
import { RANK_EXTENSION } from "../../../src/engine/state/sqlite-extensions.ts";

const VOCABULARY = ["apple", "river", "stone", "cloud", "ember", "frost", "grove", "harbor"];

/** A bare FTS5 table as the text index makes it, with agentos_bm25 loaded. */
function bareTable(texts: string[]): DatabaseSync {
  const db = new DatabaseSync(":memory:", { allowExtension: true });
  db.loadExtension(RANK_EXTENSION);
  db.enableLoadExtension(false);
  db.exec(`CREATE VIRTUAL TABLE f USING fts5(text, content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2')`);
  const insert = db.prepare("INSERT INTO f (rowid, text) VALUES (?, ?)");
  for (const [at, text] of texts.entries()) insert.run(at + 1, text);
  return db;
}

const quoted = (terms: string[]) => terms.map((term) => `"${term}"`);

/** A document: one to twelve words of the vocabulary. */
const text = fc
  .array(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 12 })
  .map((words) => words.join(" "));

/** agentos_bm25's counts argument: how many documents hold each phrase, as bm25() counts them. */
function documentCounts(db: DatabaseSync, phrases: string[]): string {
  const count = db.prepare("SELECT count(*) AS n FROM f WHERE f MATCH ?");
  return phrases.map((phrase) => count.get(phrase)?.n).join(",");
}

describe("agentos_bm25 (native/fts5-rank.c)", () => {
  it("is built by npm install and ranks the SQLite text index", async () => {
    const index = new SqliteTextIndex(":memory:");
    try {
      expect(index.ranking).toBe("agentos_bm25");
    } finally {
      await index.close();
    }
    const fallback = new SqliteTextIndex(":memory:", { native: false });
    try {
      expect(fallback.ranking).toBe("bm25");
    } finally {
      await fallback.close();
    }
  });

  it("leaves the service's connections unable to load any other library", async () => {
    const store = new SqliteStateStore(":memory:");
    try {
      const db = store.database;
      expect(() => db.loadExtension(RANK_EXTENSION)).toThrow(/not allowed/);
      expect(() => db.prepare("SELECT load_extension(?)").get(RANK_EXTENSION)).toThrow(/not authorized/);
    } finally {
      await store.close();
    }
  });

  it("gives bm25()'s relevance when given the document counts bm25() makes", () => {
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 60 }),
        fc.uniqueArray(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 4 }),
        (texts, terms) => {
          const db = bareTable(texts);
          try {
            const phrases = quoted(terms);
            const match = phrases.join(" OR ");
            const counts = documentCounts(db, phrases);
            const rows = db
              .prepare("SELECT rowid, -bm25(f) AS fts5, agentos_bm25(f, ?2) AS ours FROM f WHERE f MATCH ?1")
              .all(match, counts);
            for (const row of rows) {
              expect(row.ours).toBeCloseTo(Number(row.fts5), 12);
              expect(Number(row.ours)).toBeGreaterThan(0);
            }
          } finally {
            db.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("refuses counts that do not give one whole number per phrase, naming what it wants", () => {
    const db = bareTable(["apple river", "river stone"]);
    try {
      const rank = db.prepare('SELECT agentos_bm25(f, ?) AS r FROM f WHERE f MATCH \'"apple" OR "river"\'');
      for (const counts of ["1", "1,2,3", "x,1", "", "1,-2"])
        expect(() => rank.all(counts), counts).toThrow(/one document count per phrase/);
      expect(rank.all("1,2")).toHaveLength(2);
    } finally {
      db.close();
    }
  });

  it("weighs only the first phrases when told how many: a filter ANDed on leaves the relevance as it was", () => {
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 60 }),
        fc.uniqueArray(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 4 }),
        fc.uniqueArray(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 3 }),
        (texts, terms, holding) => {
          const db = bareTable(texts);
          try {
            const phrases = quoted(terms);
            const match = phrases.join(" OR ");
            const filter = quoted(holding).join(" OR ");
            const counts = documentCounts(db, phrases);
            const rank = (expression: string, ...weighing: number[]) =>
              db
                .prepare(
                  `SELECT rowid, agentos_bm25(f, ?2${weighing.length ? ", ?3" : ""}) AS r FROM f WHERE f MATCH ?1`,
                )
                .all(expression, counts, ...weighing)
                .map((row) => [Number(row.rowid), row.r]);
            const holders = new Set(
              db
                .prepare("SELECT rowid FROM f WHERE f MATCH ?")
                .all(filter)
                .map((row) => Number(row.rowid)),
            );
            const expected = rank(match).filter(([rowid]) => holders.has(Number(rowid)));
            expect(rank(`(${match}) AND (${filter})`, phrases.length)).toEqual(expected);
          } finally {
            db.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("answers null, for a floor, only for rows whose relevance is below it, and the others exactly", () => {
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 60 }),
        fc.uniqueArray(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 4 }),
        fc.double({ min: 0, max: 4, noNaN: true }),
        (texts, terms, floor) => {
          const db = bareTable(texts);
          try {
            const phrases = quoted(terms);
            const match = phrases.join(" OR ");
            const counts = documentCounts(db, phrases);
            const exact = new Map(
              db
                .prepare("SELECT rowid, agentos_bm25(f, ?2) AS r FROM f WHERE f MATCH ?1")
                .all(match, counts)
                .map((row) => [row.rowid, Number(row.r)]),
            );
            const floored = db
              .prepare("SELECT rowid, agentos_bm25(f, ?2, ?3, ?4) AS r FROM f WHERE f MATCH ?1")
              .all(match, counts, phrases.length, floor);
            expect(floored).toHaveLength(exact.size);
            for (const row of floored) {
              const relevance = exact.get(row.rowid) as number;
              if (row.r === null) expect(relevance).toBeLessThan(floor);
              else expect(row.r).toBe(relevance);
            }
          } finally {
            db.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("refuses a count of weighing phrases outside 1 to the query's phrases", () => {
    const db = bareTable(["apple river", "river stone"]);
    try {
      const rank = db.prepare(
        'SELECT agentos_bm25(f, ?, ?) AS r FROM f WHERE f MATCH \'("apple" OR "river") AND "river"\'',
      );
      for (const [counts, scored] of [
        ["1", 0],
        ["1,2,3,4", 4],
        ["1,2", -1],
      ] as const)
        expect(() => rank.all(counts, scored), `${counts} ${scored}`).toThrow(
          /one document count per phrase/,
        );
      expect(rank.all("1,2", 2)).toHaveLength(2);
      expect(rank.all("1,2,2", 3)).toHaveLength(2);
    } finally {
      db.close();
    }
  });

  it("ranks a scope as bm25() does: the same hits in the same order", async () => {
    // Other scopes share the table (their words count), as every agent's memory shares it.
    const native = new SqliteTextIndex(":memory:");
    const fts5 = new SqliteTextIndex(":memory:", { native: false });
    let seed = 11;
    const pick = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return VOCABULARY[seed % (1 + (seed % VOCABULARY.length))];
    };
    const start = Date.parse("2025-01-01T00:00:00.000Z");
    try {
      for (let i = 0; i < 1500; i++) {
        const text = Array.from({ length: 2 + (i % 7) }, pick).join(" ");
        const createdAt = new Date(start + i * 3_600_000).toISOString();
        for (const index of [native, fts5])
          await index.put("m", `s${i % 5}`, `d${i}`, { text, data: i, createdAt });
      }
      for (const query of ["apple", "river stone", "cloud ember frost", "harbor grove apple river"]) {
        for (const limit of [1, 10, 100]) {
          const expected = await fts5.search("m", "s1", query, { limit });
          const actual = await native.search("m", "s1", query, { limit });
          expect(actual.map((hit) => hit.id)).toEqual(expected.map((hit) => hit.id));
          for (const [i, hit] of actual.entries()) expect(hit.score).toBeCloseTo(expected[i].score, 9);
        }
      }
    } finally {
      await native.close();
      await fts5.close();
    }
  });
});
