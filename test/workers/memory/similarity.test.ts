import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { wordsOf } from "../../../src/engine/search/query.ts";
import { SIMILARITY_CHARS, similarity } from "../../../src/workers/memory/similarity.ts";

const word = fc.stringMatching(/^[a-z]{5,9}$/);

describe("memory similarity", () => {
  it("is in [0, 1] for any query and memory", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (query, content) => {
        const score = similarity(query, content);
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(1);
      }),
    );
  });

  it("is 1 for the same words in any order and case, and 0 for no shared word", () => {
    fc.assert(
      fc.property(fc.uniqueArray(word, { minLength: 1, maxLength: 6 }), (words) => {
        const shuffled = [...words].reverse().map((w) => w.toUpperCase());
        expect(similarity(words.join(" "), `${shuffled.join(", ")}!`)).toBe(1);
        expect(similarity(words.join(" "), "0 1 2 3")).toBe(0);
      }),
    );
  });

  it("falls as the memory holds more other words, and as fewer query words are found", () => {
    expect(similarity("billing deploy", "billing deploy")).toBe(1);
    expect(similarity("billing deploy", "billing deployment friday")).toBeCloseTo(
      1 * (0.5 + (2 / 3) * 0.5),
      6,
    );
    expect(similarity("billing deploy", "billing lunch")).toBeCloseTo(0.5 * (0.5 + 0.5 * 0.5), 6);
    expect(similarity("the of", "the of")).toBe(0);
  });
});

/** The definition, word against word: what the indexed scoring must answer for any query and memory. */
function reference(query: string, content: string): number {
  const asked = [...wordsOf(query, 32)];
  const held = wordsOf(content.slice(0, SIMILARITY_CHARS));
  if (asked.length === 0 || held.size === 0) return 0;
  const related = (a: string, b: string) => {
    const [short, long] = a.length <= b.length ? [a, b] : [b, a];
    return short.length >= 4 && long.startsWith(short);
  };
  const found = asked.filter((term) => held.has(term) || [...held].some((word) => related(term, word)));
  if (found.length === 0) return 0;
  const coverage = found.length / asked.length;
  const precision = Math.min(1, found.length / held.size);
  return Math.round(coverage * (0.5 + 0.5 * precision) * 1e6) / 1e6;
}

describe("memory similarity, looked up rather than compared word by word", () => {
  const stems = fc.stringMatching(/^[a-d]{1,8}$/);
  const text = fc.array(stems, { maxLength: 40 }).map((words) => words.join(" "));

  it("answers what the word-by-word definition answers, for any query and memory", () => {
    fc.assert(
      fc.property(text, text, (query, content) => {
        expect(similarity(query, content)).toBe(reference(query, content));
      }),
      { numRuns: 2000 },
    );
  });

  it("reads a memory's words from its first SIMILARITY_CHARS characters", () => {
    const far = `${"filler ".repeat(SIMILARITY_CHARS / 7 + 1)}deployment`;
    expect(similarity("deployment", far)).toBe(0);
    expect(similarity("deployment", `deployment ${far}`)).toBeGreaterThan(0);
  });

  it("scores a memory of thousands of distinct words against a full query", () => {
    const content = Array.from({ length: 20_000 }, (_, i) => `w${i.toString(36)}xyz`).join(" ");
    const query = Array.from({ length: 32 }, (_, i) => `q${i}abcd`).join(" ");
    expect(similarity(query, content)).toBe(reference(query, content));
  });
});
