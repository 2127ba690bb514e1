import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exceedsDepth } from "../../src/shared/json-depth.ts";

/** Reference: a scalar has depth 0, an array or object one more than its deepest member. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child));
  return 1 + deepest;
}

function nested(levels: number, wrap: (inner: unknown) => unknown): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < levels; i++) value = wrap(value);
  return value;
}

describe("exceedsDepth", () => {
  it("agrees with a recursive reference on random JSON values", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, maxDepth) => {
        expect(exceedsDepth(value, maxDepth)).toBe(depthOf(value) > maxDepth);
      }),
    );
  });

  it("counts the deepest branch, not the first or the last", () => {
    const deepInMiddle = { a: 1, b: { c: { d: [1] } }, e: [] };
    expect(depthOf(deepInMiddle)).toBe(4);
    expect(exceedsDepth(deepInMiddle, 3)).toBe(true);
    expect(exceedsDepth(deepInMiddle, 4)).toBe(false);
    expect(exceedsDepth([[], [[[]]], []], 4)).toBe(false);
    expect(exceedsDepth([[], [[[]]], []], 3)).toBe(true);
  });

  it("scalars have depth 0 and an empty container depth 1", () => {
    for (const scalar of [null, 0, "s", true]) expect(exceedsDepth(scalar, 0)).toBe(false);
    expect(exceedsDepth({}, 0)).toBe(true);
    expect(exceedsDepth([], 1)).toBe(false);
  });

  it("handles 100000 levels of nesting without overflowing the stack", () => {
    for (const wrap of [(inner: unknown) => [inner], (inner: unknown) => ({ k: inner })]) {
      const deep = nested(100_000, wrap);
      expect(exceedsDepth(deep, 64)).toBe(true);
      expect(exceedsDepth(deep, 99_999)).toBe(true);
      expect(exceedsDepth(deep, 100_000)).toBe(false);
    }
  });
});
