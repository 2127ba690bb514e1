import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { similarity } from "../../../src/workers/memory/similarity.ts";

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
