import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MIN_ENTRIES } from "../../../src/engine/search/common-terms.ts";
import { SqliteTextIndex } from "../../../src/engine/search/sqlite.ts";

const WORDS = ["alpha", "bravo", "charlie", "delta", "echo"];

describe("common terms (SQLite)", () => {
  it("finds exactly what the query without its common terms finds, and nothing when all are common", async () => {
    const index = new SqliteTextIndex(":memory:");
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: MIN_ENTRIES - 20, max: MIN_ENTRIES + 80 }),
          fc.array(fc.double({ min: 0, max: 1, noNaN: true }), {
            minLength: WORDS.length,
            maxLength: WORDS.length,
          }),
          fc.subarray(WORDS, { minLength: 1 }),
          fc.integer({ min: 0, max: 2 ** 31 - 1 }),
          async (size, odds, query, seed) => {
            const scope = `s${run++}`;
            let state = seed;
            const random = () => {
              state = (state * 1103515245 + 12345) % 2 ** 31;
              return state / 2 ** 31;
            };
            const docs = Array.from({ length: size }, () =>
              WORDS.filter((_, w) => random() < (odds[w] ?? 0)),
            );
            for (const [i, words] of docs.entries()) {
              await index.put("m", scope, `d${i}`, {
                text: `note ${words.join(" ")}`,
                data: i,
                createdAt: new Date(Date.now() - i * 1000).toISOString(),
              });
            }
            // Brute force: a word is common when at least half of the (at most 1 000 newest) entries hold it.
            const common = (word: string) =>
              size >= MIN_ENTRIES && docs.filter((words) => words.includes(word)).length * 2 >= size;
            const kept = query.filter((word) => !common(word));
            const hits = await index.search("m", scope, query.join(" "), { limit: 500 });
            if (kept.length === 0) {
              expect(hits).toEqual([]);
              return;
            }
            const reference = await index.search("m", scope, kept.join(" "), { limit: 500 });
            expect(hits.map((hit) => hit.id)).toEqual(reference.map((hit) => hit.id));
            // And every hit holds a kept word.
            for (const hit of hits)
              expect(kept.some((word) => docs[hit.data as number]?.includes(word))).toBe(true);
          },
        ),
        { numRuns: 25 },
      );
    } finally {
      await index.close();
    }
  });
});
