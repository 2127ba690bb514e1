import { describe, expect, it } from "vitest";
import { AppError } from "../../../src/shared/errors.ts";
import {
  FIRST_RETRY_MS,
  isRefusal,
  MAX_RETRY_MS,
  refusalDelayMs,
  retryDelayMs,
} from "../../../src/workers/memory/backoff.ts";
import { fuse, hybridScore, RRF_K } from "../../../src/workers/memory/fusion.ts";

const now = Date.parse("2025-06-01T00:00:00Z");
const day = 24 * 60 * 60 * 1000;
const entry = (id: string, ageDays = 0) => ({ id, createdAt: new Date(now - ageDays * day).toISOString() });
const options = { lists: 2, limit: 10, nowMs: now, halfLifeMs: 30 * day };

describe("hybrid recall's fusion", () => {
  it("ranks what both lists found above what one found at a similar place, and says which found it", () => {
    const fused = fuse({ text: [entry("a"), entry("b")], vector: [entry("c"), entry("a")] }, options);
    expect(fused.map((hit) => [hit.item.id, hit.matchedBy])).toEqual([
      ["a", ["text", "vector"]],
      ["c", ["vector"]],
      ["b", ["text"]],
    ]);
  });

  it("scores a first place in every list 1, and 1/(k + rank) shares otherwise, times recency", () => {
    const [top] = fuse({ text: [entry("a")], vector: [entry("a")] }, options);
    expect(top?.relevance).toBeCloseTo(1, 10);
    const [alone] = fuse({ text: [entry("a")], vector: [] }, options);
    expect(alone?.relevance).toBeCloseTo(0.5, 10);
    // An entry one half-life old keeps (1 + 0.5 · 0.5) / 1.5 of it.
    const [old] = fuse({ text: [entry("a", 30)], vector: [entry("a", 30)] }, options);
    expect(old?.relevance).toBeCloseTo(1.25 / 1.5, 10);
    const second = fuse({ text: [entry("x"), entry("y")], vector: [] }, { ...options, lists: 1 });
    expect(second[1]?.relevance).toBeCloseTo((RRF_K + 1) / (RRF_K + 2), 10);
  });

  it("lets recency reorder close ranks, puts the newer first among equals, and keeps to the limit", () => {
    // Rank 1 ten days old (× 0.93) against rank 2 from today: 0.931 / 61 < 1 / 62.
    const fused = fuse({ text: [], vector: [entry("old", 10), entry("new", 0)] }, options);
    expect(fused.map((hit) => hit.item.id)).toEqual(["new", "old"]);
    const limited = fuse({ text: [entry("a"), entry("b")], vector: [] }, { ...options, limit: 1 });
    expect(limited.map((hit) => hit.item.id)).toEqual(["a"]);
    const tied = fuse(
      { text: [{ id: "p", createdAt: entry("x").createdAt }], vector: [entry("q")] },
      options,
    );
    expect(tied.map((hit) => hit.item.id)).toEqual(["p", "q"]);
  });

  it("keeps score in [0, 1]: the larger of word similarity and the cosine clipped at 0", () => {
    expect(hybridScore(0.3, 0.8)).toBe(0.8);
    expect(hybridScore(0.9, 0.2)).toBe(0.9);
    expect(hybridScore(0.4, -0.7)).toBe(0.4);
    expect(hybridScore(0, undefined)).toBe(0);
    expect(hybridScore(0, 1.0000001)).toBe(1);
  });
});

describe("the embedding queue's backoff", () => {
  it("waits 1 s after a first failure, doubling to 60 s, jittered between half and all of it", () => {
    expect(retryDelayMs(1, 0.999999)).toBe(FIRST_RETRY_MS);
    expect(retryDelayMs(1, 0)).toBe(FIRST_RETRY_MS / 2);
    expect(retryDelayMs(3, 0.999999)).toBe(4 * FIRST_RETRY_MS);
    expect(retryDelayMs(20, 0.999999)).toBe(MAX_RETRY_MS);
    expect(retryDelayMs(20, 0)).toBe(MAX_RETRY_MS / 2);
  });

  it("pauses a refused agent at least 60 s, and tells refusals from faults", () => {
    expect(refusalDelayMs(0)).toBe(60_000);
    expect(refusalDelayMs(0.999999)).toBeLessThanOrEqual(90_000);
    expect(isRefusal(new AppError("budget_exceeded", "spent"))).toBe(true);
    expect(isRefusal(new AppError("conflict", "Realm r is paused"))).toBe(true);
    expect(isRefusal(new AppError("upstream", "503"))).toBe(false);
    expect(isRefusal(new Error("socket hang up"))).toBe(false);
  });
});
