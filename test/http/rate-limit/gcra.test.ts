import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { gcra } from "../../../src/http/rate-limit/gcra.ts";

const HOUR = 3_600_000;

function burst(limit: number, now: number, count: number): boolean[] {
  let tat: number | undefined;
  const allowed: boolean[] = [];
  for (let i = 0; i < count; i++) {
    const decision = gcra(tat, now, limit, HOUR);
    if (decision.allowed) tat = decision.tat;
    allowed.push(decision.allowed);
  }
  return allowed;
}

describe("gcra", () => {
  it("allows exactly `limit` requests at one instant, for every limit", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 0, max: 2 ** 42 }), (limit, now) => {
        const allowed = burst(limit, now, limit + 1);
        expect(allowed.filter(Boolean)).toHaveLength(limit);
        expect(allowed[limit]).toBe(false);
      }),
    );
  });

  it("lets one more request through per emission interval after a burst", () => {
    let tat: number | undefined;
    for (let i = 0; i < 7; i++) tat = gcra(tat, 0, 7, HOUR).tat;
    const denied = gcra(tat, 0, 7, HOUR);
    expect(denied.allowed).toBe(false);
    expect(denied.retryAfterMs).toBeGreaterThan(0);
    expect(gcra(tat, denied.retryAfterMs, 7, HOUR).allowed).toBe(true);
  });

  it("reports remaining requests and the time until the full budget is back", () => {
    const first = gcra(undefined, 1000, 4, HOUR);
    expect(first).toMatchObject({
      allowed: true,
      limit: 4,
      remaining: 3,
      retryAfterMs: 0,
      resetMs: HOUR / 4,
    });
  });

  it("never allows more than limit + elapsed/interval requests over any schedule", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.array(fc.integer({ min: 0, max: HOUR }), { minLength: 1, maxLength: 300 }),
        (limit, gaps) => {
          let now = 0;
          let tat: number | undefined;
          let allowed = 0;
          for (const gap of gaps) {
            now += gap;
            const decision = gcra(tat, now, limit, HOUR);
            if (decision.allowed) {
              tat = decision.tat;
              allowed++;
            }
          }
          expect(allowed).toBeLessThanOrEqual(limit + Math.floor(now / (HOUR / limit)) + 1);
        },
      ),
    );
  });
});

describe("gcra remaining count", () => {
  it("counts down from limit − 1 to 0 across a burst, for every limit", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 0, max: 2 ** 42 }), (limit, now) => {
        let tat: number | undefined;
        const remaining: number[] = [];
        for (let i = 0; i < limit; i++) {
          const decision = gcra(tat, now, limit, HOUR);
          tat = decision.tat;
          remaining.push(decision.remaining);
        }
        expect(remaining).toEqual(Array.from({ length: limit }, (_, i) => limit - 1 - i));
      }),
      { numRuns: 50 },
    );
  });
});
