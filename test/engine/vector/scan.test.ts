import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CodeMemory, Int8Scorer } from "../../../src/engine/vector/code-memory.ts";
import { CodeSet, followWrite, refreshPlan } from "../../../src/engine/vector/codes.ts";
import { turned } from "../../../src/engine/vector/rotation.ts";
import {
  asymmetricScores,
  asymmetricShortlist,
  asymmetricTable,
  bestScored,
  codeWords,
  hammingDistances,
  hammingShortlist,
  int8Cosine,
  int8Vector,
  passSizes,
  shortlist,
  signCode,
  unitVector,
} from "../../../src/engine/vector/scan.ts";
import { sleb, uleb } from "../../../src/engine/vector/wasm.ts";
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
          const expected = hammingDistances(codes, n, words, query);
          const { distances, histogram } = memory.distances(n, query);
          expect([...distances]).toEqual([...expected]);
          const counted = new Array(words * 32 + 1).fill(0);
          for (const d of expected) counted[d]++;
          expect([...histogram]).toEqual(counted);
          const take = Math.max(1, Math.floor(n / 3));
          expect([...memory.nearest(n, query, take)]).toEqual([
            ...hammingShortlist(expected, words * 32, take),
          ]);
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

  it("WebAssembly asymmetric scores equal JavaScript's, bit for bit, and leave the codes intact", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 700 }),
        fc.array(fc.nat(), { maxLength: 70 }),
        (seed, n, dims, picks) => {
          const vectors = uniformVectors(n + 1, dims, seed);
          const { codes, words } = packed(vectors.slice(1), dims);
          const memory = new CodeMemory(words, n);
          memory.codes.set(codes);
          const unit = unitVector(vectors[0]);
          // Any slots, repeated or not, in any number (the kernel scores four at a time, then the rest).
          const slots = Int32Array.from(picks, (pick) => pick % n);
          const table = asymmetricTable(unit, words * 4, new Float32Array(words * 4 * 256));
          expect([...memory.asymmetricScores(unit, slots)]).toEqual([
            ...asymmetricScores(codes, words, table, slots),
          ]);
          expect([...memory.codes]).toEqual([...codes]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("ranks scored slots as a stable sort by descending score does (ties, negatives, −0)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(fc.constantFrom(0, -0, 1, -1, 0.5), fc.float({ noNaN: true, noDefaultInfinity: true })),
          { minLength: 1, maxLength: 300 },
        ),
        fc.integer({ min: 1, max: 300 }),
        (values, take) => {
          const scores = Float32Array.from(values);
          const slots = Int32Array.from(values, (_, i) => 1000 + ((i * 7) % values.length));
          const stable = values.map((_, i) => i).sort((a, b) => scores[b] - scores[a]);
          const expected = stable.slice(0, take).map((i) => slots[i]);
          expect([...bestScored(scores, slots, take)]).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("WebAssembly int8 cosines equal int8Cosine of each vector, bit for bit", () => {
    const scorer = new Int8Scorer();
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.integer({ min: 1, max: 300 }),
        // Past one batch of 256, and counts that are not a multiple of four.
        fc.oneof(fc.integer({ min: 0, max: 11 }), fc.integer({ min: 250, max: 600 })),
        (seed, dims, n) => {
          const [query, ...vectors] = uniformVectors(n + 1, dims, seed);
          const unit = unitVector(query);
          // Each in a buffer of its own, as SQLite's rows come.
          const stored = vectors.map((vector) => Uint8Array.from(int8Vector(unitVector(vector))));
          expect([...scorer.cosines(unit, stored)]).toEqual(stored.map((vec) => int8Cosine(unit, vec)));
        },
      ),
      { numRuns: 60 },
    );
    expect(() => scorer.cosines(unitVector([1, 2, 3]), [int8Vector(unitVector([1, 2]))])).toThrow(
      /2 dimensions, not 3/,
    );
  });

  it("shortlists through a code set exactly as the JavaScript passes do", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.integer({ min: 1, max: 1500 }),
        fc.constantFrom(8, 33, 100, 384),
        fc.integer({ min: 1, max: 60 }),
        (seed, n, dims, rescore) => {
          const vectors = uniformVectors(n + 1, dims, seed);
          const { codes, words } = packed(vectors.slice(1), dims);
          const set = new CodeSet("m", dims, { version: 1, deletes: 0 });
          vectors.slice(1).forEach((_, i) => {
            const code = new Uint8Array(codes.buffer, i * words * 4, words * 4);
            set.upsert({ id: `e${i}`, ref: i, code });
          });
          const unit = unitVector(vectors[0]);
          const sizes = passSizes(rescore, rescore);
          const all = Int32Array.from({ length: n }, (_, i) => i);
          // The passes compare the query turned as stored codes are (rotation.ts).
          const query = new Uint32Array(signCode(turned(unit)).buffer);
          const first =
            sizes.hamming >= n
              ? all
              : hammingShortlist(hammingDistances(codes, n, words, query), words * 32, sizes.hamming);
          const expected =
            n <= rescore * 2 ? all : asymmetricShortlist(codes, words, turned(unit), first, rescore);
          expect([...shortlist(set, unit, sizes)]).toEqual([...expected]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("code sets keep their codes when a query's scratch grows the memory, and grow after it", () => {
    const dims = 64;
    const vectors = uniformVectors(1001, dims, 5);
    const { codes, words } = packed(vectors.slice(1), dims);
    const set = new CodeSet("m", dims, { version: 1, deletes: 0 });
    const add = (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        set.upsert({ id: `e${i}`, ref: i, code: new Uint8Array(codes.buffer, i * words * 4, words * 4) });
      }
    };
    const unit = unitVector(vectors[0]);
    const query = new Uint32Array(signCode(unit).buffer);
    add(0, 300);
    set.asymmetricScores(
      unit,
      Int32Array.from({ length: 300 }, (_, i) => i),
    );
    add(300, 1000);
    expect([...set.codes.subarray(0, 1000 * words)]).toEqual([...codes]);
    expect([...set.nearest(query, 50)]).toEqual([
      ...hammingShortlist(hammingDistances(codes, 1000, words, query), words * 32, 50),
    ]);
  });

  it("encodes WebAssembly integers as LEB128", () => {
    expect(uleb(0)).toEqual([0]);
    expect(uleb(127)).toEqual([127]);
    expect(uleb(128)).toEqual([0x80, 1]);
    expect(uleb(624_485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(sleb(63)).toEqual([63]);
    expect(sleb(64)).toEqual([0xc0, 0]);
    expect(sleb(-1)).toEqual([0x7f]);
    expect(sleb(-4)).toEqual([0x7c]);
    expect(sleb(-64)).toEqual([0x40]);
    expect(sleb(-65)).toEqual([0xbf, 0x7f]);
    expect(sleb(1024)).toEqual([0x80, 0x08]);
  });
});
