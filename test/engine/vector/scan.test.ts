import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CodeSet, followWrite, refreshPlan } from "../../../src/engine/vector/codes.ts";
import { CodeMemory } from "../../../src/engine/vector/popcount.ts";
import {
  asymmetricShortlist,
  codeWords,
  hammingDistances,
  hammingShortlist,
  int8Cosine,
  int8Vector,
  passSizes,
  signCode,
  unitVector,
} from "../../../src/engine/vector/scan.ts";
import { cosine, uniformVectors } from "./data.ts";

const packed = (vectors: Float32Array[], dims: number) => {
  const words = codeWords(dims);
  const codes = new Uint32Array(vectors.length * words);
  vectors.forEach((vector, i) => {
    codes.set(new Uint32Array(signCode(unitVector(vector)).buffer), i * words);
  });
  return { codes, words };
};

describe("vector scan core", () => {
  it("int8 cosine stays within 0.01 of the float cosine", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 30 }), fc.integer({ min: 1, max: 700 }), (seed, dims) => {
        const [a, b] = uniformVectors(2, dims, seed);
        const stored = int8Vector(unitVector(a));
        expect(stored.length).toBe(dims + 4);
        expect(Math.abs(int8Cosine(unitVector(b), stored) - cosine(a, b))).toBeLessThan(0.01);
        expect(int8Cosine(unitVector(a), stored)).toBeGreaterThan(0.99);
      }),
      { numRuns: 200 },
    );
  });

  it("Hamming shortlist holds exactly the nearest codes (any of those tied at the cut-off)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 320 }),
        (seed, n, dims, take) => {
          const vectors = uniformVectors(n + 1, dims, seed);
          const { codes, words } = packed(vectors.slice(1), dims);
          const query = new Uint32Array(signCode(unitVector(vectors[0])).buffer);
          const distance = (slot: number) => {
            let d = 0;
            for (let w = 0; w < words; w++) {
              let x = codes[slot * words + w] ^ query[w];
              for (; x; x &= x - 1) d++;
            }
            return d;
          };
          const got = [...hammingShortlist(hammingDistances(codes, n, words, query), words * 32, take)];
          expect(got).toHaveLength(Math.min(n, take));
          expect(new Set(got).size).toBe(got.length);
          const all = Array.from({ length: n }, (_, slot) => distance(slot)).sort((a, b) => a - b);
          const mine = got.map(distance).sort((a, b) => a - b);
          expect(mine).toEqual(all.slice(0, got.length));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("asymmetric shortlist ranks by the query's values over sign bits", () => {
    const dims = 20;
    const vectors = uniformVectors(50, dims, 9);
    const { codes, words } = packed(vectors, dims);
    const query = unitVector(uniformVectors(1, dims, 10)[0]);
    const exact = (slot: number) => query.reduce((sum, x, i) => sum + (vectors[slot][i] > 0 ? x : -x), 0);
    const slots = Int32Array.from({ length: 50 }, (_, i) => i);
    const got = [...asymmetricShortlist(codes, words, query, slots, 5)];
    const expected = [...slots].sort((a, b) => exact(b) - exact(a)).slice(0, 5);
    expect(got.map(exact)).toEqual(expected.map(exact));
  });

  it("WebAssembly Hamming distances equal JavaScript's", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 1, max: 1600 }),
        (seed, n, dims) => {
          const vectors = uniformVectors(n + 1, dims, seed);
          const { codes, words } = packed(vectors.slice(1), dims);
          const memory = new CodeMemory(words, Math.max(1, n));
          memory.codes.set(codes);
          const query = new Uint32Array(signCode(unitVector(vectors[0])).buffer);
          expect([...memory.distances(n, query)]).toEqual([...hammingDistances(codes, n, words, query)]);
        },
      ),
      { numRuns: 30 },
    );
  });

  it("sizes passes from the limit, never below it", () => {
    expect(passSizes(10)).toEqual({ hamming: 1600, rescore: 200 });
    expect(passSizes(50)).toEqual({ hamming: 8000, rescore: 1000 });
    expect(passSizes(10, 3)).toEqual({ hamming: 80, rescore: 10 });
  });

  it("code sets: delete moves the last slot into the hole; counters decide the refresh", () => {
    const set = new CodeSet("m", 40, { version: 1, deletes: 0 });
    const code = (bit: number) => {
      const words = new Uint32Array(2);
      words[bit >> 5] = 1 << (bit & 31);
      return new Uint8Array(words.buffer);
    };
    for (let i = 0; i < 100; i++) set.upsert({ id: `e${i}`, ref: i, code: code(i % 40) });
    set.remove("e3");
    set.upsert({ id: "e5", ref: 500, code: code(39) });
    expect(set.count).toBe(99);
    expect(set.has("e3")).toBe(false);
    expect(set.ids[3]).toBe("e99");
    expect(set.codes[3 * 2]).toBe(1 << (99 % 40));
    expect(set.refs[5]).toBe(500);
    expect(refreshPlan(set, { version: 1, deletes: 0 })).toBe("current");
    expect(refreshPlan(set, { version: 4, deletes: 0 })).toBe("since");
    expect(refreshPlan(set, { version: 4, deletes: 1 })).toBe("load");
    expect(refreshPlan(undefined, { version: 1, deletes: 0 })).toBe("load");
    followWrite([set], { version: 3, deletes: 0 }, false, () => set.remove("e0"));
    expect(set.has("e0")).toBe(true);
    followWrite([set], { version: 2, deletes: 1 }, true, () => set.remove("e0"));
    expect(set.has("e0")).toBe(false);
    expect(set.at).toEqual({ version: 2, deletes: 1 });
  });
});
