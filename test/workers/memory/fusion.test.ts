import { describe, expect, it } from "vitest";
import { AppError } from "../../../src/shared/errors.ts";
import {
  FIRST_RETRY_MS,
  isRefusal,
  MAX_RETRY_MS,
  refusalDelayMs,
  retryDelayMs,
} from "../../../src/workers/memory/backoff.ts";
import { fuse, hybridScore } from "../../../src/workers/memory/fusion.ts";

const now = Date.parse("2025-06-01T00:00:00Z");
const day = 24 * 60 * 60 * 1000;
const entry = (id: string, ageDays = 0) => ({ id, createdAt: new Date(now - ageDays * day).toISOString() });
const options = { lists: 2, limit: 10, nowMs: now, halfLifeMs: 30 * day };

describe("hybrid recall's fusion", () => {
  const scored = (id: string, score: number, ageDays = 0) => ({ item: entry(id, ageDays), score });
  /** Word similarity by id, as recall.ts measures it against the query. */
  const words = (table: Record<string, number>) => ({
    ...options,
    similarity: (item: { id: string }) => table[item.id] ?? 0,
  });

  it("ranks what both lists found above what one found at a similar place, and says which found it", () => {
    const fused = fuse(
      { text: [entry("a"), entry("b")], vector: [scored("c", 0.6), scored("a", 0.6), scored("y", 0.1)] },
      words({ a: 0.6, b: 0.6, c: 0.2 }),
    );
    expect(fused.slice(0, 3).map((hit) => [hit.item.id, hit.matchedBy])).toEqual([
      ["a", ["text", "vector"]],
      ["c", ["vector"]],
      ["b", ["text"]],
    ]);
  });

  it("keeps the fact only the vectors found, first by far, above entries sharing a few of the question's words", () => {
    const fused = fuse(
      {
        text: [entry("w1"), entry("w2"), entry("w3")],
        vector: [scored("fact", 0.9), scored("w1", 0.31), scored("w2", 0.3), scored("w3", 0.29)],
      },
      words({ w1: 0.5, w2: 0.5, w3: 0.4 }),
    );
    expect(fused[0]?.item.id).toBe("fact");
  });

  it("blends word similarity and the cosine clipped at 0 as (4 · max + min) / 5, giving an entry the vector list missed its last cosine", () => {
    const [top] = fuse({ text: [entry("a")], vector: [scored("a", 1)] }, words({ a: 1 }));
    expect(top?.relevance).toBeCloseTo(1, 10);
    const both = fuse(
      { text: [entry("t")], vector: [scored("v", 0.8), scored("low", 0.2), scored("n", -0.5)] },
      words({ t: 0.6, v: 0 }),
    );
    const relevance = Object.fromEntries(both.map((hit) => [hit.item.id, hit.relevance]));
    expect(relevance.v).toBeCloseTo(0.64, 10);
    expect(relevance.n).toBeCloseTo(0, 10);
    // t was not among the vector list's: it has at most that list's last cosine (-0.5, clipped at 0).
    expect(relevance.t).toBeCloseTo((4 * 0.6 + 0) / 5, 10);
    const [vectorOnly] = fuse({ text: [], vector: [scored("a", 0.7)] }, { ...words({ a: 1 }), lists: 1 });
    expect(vectorOnly?.relevance).toBeCloseTo(0.7, 10);
  });

  it("weighs by recency, puts the newer first among equals, and keeps to the limit", () => {
    const fused = fuse({ text: [], vector: [scored("old", 0.8, 60), scored("new", 0.8, 0)] }, words({}));
    expect(fused.map((hit) => hit.item.id)).toEqual(["new", "old"]);
    // One half-life old keeps (1 + 0.5 · 0.5) / 1.5 of it.
    const [aged] = fuse({ text: [entry("a", 30)], vector: [scored("a", 1, 30)] }, words({ a: 1 }));
    expect(aged?.relevance).toBeCloseTo(1.25 / 1.5, 10);
    const limited = fuse({ text: [entry("a"), entry("b")], vector: [] }, { ...words({ a: 1 }), limit: 1 });
    expect(limited.map((hit) => hit.item.id)).toEqual(["a"]);
    const tied = fuse({ text: [entry("p")], vector: [scored("q", 0.5)] }, words({ p: 0.5, q: 0 }));
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
