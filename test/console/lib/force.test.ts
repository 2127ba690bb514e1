import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { forceLayout } from "../../../src/console/web/lib/force.ts";

const size = { width: 600, height: 400 };

describe("forceLayout", () => {
  it("places every node once, inside the box, the same way every time", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 12 }),
        fc.array(fc.tuple(fc.nat(11), fc.nat(11)), { maxLength: 20 }),
        (ids, pairs) => {
          const edges = pairs
            .filter(([a, b]) => a < ids.length && b < ids.length)
            .map(([a, b]) => [ids[a], ids[b]] as [string, string]);
          const placed = forceLayout(ids, edges, size, 60);
          expect(placed.map((node) => node.id)).toEqual(ids);
          for (const node of placed) {
            expect(node.x).toBeGreaterThanOrEqual(0);
            expect(node.x).toBeLessThanOrEqual(size.width);
            expect(node.y).toBeGreaterThanOrEqual(0);
            expect(node.y).toBeLessThanOrEqual(size.height);
          }
          expect(forceLayout(ids, edges, size, 60)).toEqual(placed);
        },
      ),
      { numRuns: 50 },
    );
  });

  it("keeps linked nodes closer than unlinked ones", () => {
    const placed = new Map(
      forceLayout(
        ["a", "b", "c", "d"],
        [
          ["a", "b"],
          ["c", "d"],
        ],
        size,
      ).map((node) => [node.id, node]),
    );
    const distance = (p: string, q: string) => {
      const [s, t] = [placed.get(p), placed.get(q)];
      return Math.hypot((s?.x ?? 0) - (t?.x ?? 0), (s?.y ?? 0) - (t?.y ?? 0));
    };
    expect(distance("a", "b")).toBeLessThan(distance("a", "c"));
    expect(distance("c", "d")).toBeLessThan(distance("b", "d"));
  });
});
