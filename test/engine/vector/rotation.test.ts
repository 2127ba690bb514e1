import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { turned } from "../../../src/engine/vector/rotation.ts";
import { int8Vector, storedCode } from "../../../src/engine/vector/scan.ts";
import { uniformVectors, unit } from "./data.ts";

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0);

describe("the turn before sign codes", () => {
  it("keeps every dot product and length (it is orthogonal)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 8, 33, 384, 1000, 1536),
        fc.integer({ min: 1, max: 2 ** 30 }),
        (dims, seed) => {
          const [a, b] = uniformVectors(2, dims, seed).map(unit) as [Float32Array, Float32Array];
          expect(turned(a)).toHaveLength(dims);
          expect(Math.abs(dot(turned(a), turned(a)) - 1)).toBeLessThan(1e-5);
          expect(Math.abs(dot(turned(a), turned(b)) - dot(a, b))).toBeLessThan(1e-5);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("spreads a one-hot vector over nearly every dimension", () => {
    for (const dims of [384, 1536]) {
      const spike = new Float32Array(dims);
      spike[7] = 1;
      const spread = turned(spike).filter((x) => x !== 0).length;
      expect(spread / dims).toBeGreaterThan(0.9);
    }
  });

  it("is the same turn in every process and version (stored codes depend on it: see CODE_FORMAT)", () => {
    const vector = unit(Float32Array.from({ length: 1536 }, (_, i) => Math.sin(i + 1)));
    expect(
      createHash("sha256")
        .update(storedCode(int8Vector(vector)))
        .digest("hex")
        .slice(0, 16),
    ).toBe("e47b030b0a9a4fc5");
  });
});
