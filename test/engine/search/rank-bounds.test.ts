import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  mostPerPhrase,
  oldestSlot,
  relevanceToReach,
  type ScoreWindow,
} from "../../../src/engine/search/rank-bounds.ts";
import { rankScore, type ScoredRow } from "../../../src/engine/search/score.ts";

const DAY = 24 * 60 * 60 * 1000;
const window = (nowMs: number, limit = 1): ScoreWindow => ({
  limit,
  nowMs,
  halfLifeMs: 30 * DAY,
  slotEpochMs: 0,
});
const row = (relevance: number, createdMs: number): ScoredRow => ({
  id: "x",
  data: "{}",
  created_at: "",
  created_ms: createdMs,
  relevance,
});
/**
 * A match's BM25 relevance: none, or at least 1e-6 (the ranker's idf floor). Subnormal doubles (9e-323)
 * are not relevances a ranker computes, and there the scores round to ties the strict bound cannot hold.
 */
const relevance = fc.oneof(fc.constant(0), fc.double({ min: 1e-6, max: 60, noNaN: true }));
const slot = fc.integer({ min: 0, max: 400 * DAY });

describe("the ranker's bounds (rank-bounds.ts)", () => {
  it("never asks more relevance than a match that reaches the score has", () => {
    fc.assert(
      fc.property(relevance, slot, fc.integer({ min: 0, max: 30 * DAY }), (r, at, ahead) => {
        const request = window(at + ahead);
        const score = rankScore(r, at, request.nowMs, request.halfLifeMs);
        expect(relevanceToReach(request, score, at)).toBeLessThanOrEqual(r);
      }),
    );
  });

  it("bounds what a phrase adds to BM25 at any frequency and length", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 1_000_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 500 }),
        fc.double({ min: 1, max: 100, noNaN: true }),
        (docs, share, frequency, length, average) => {
          const holding = Math.max(1, Math.floor(docs * share));
          const [most] = mostPerPhrase([holding], docs);
          const idf = Math.max(1e-6, Math.log((docs - holding + 0.5) / (holding + 0.5)));
          const added = idf * ((frequency * 2.2) / (frequency + 1.2 * (0.25 + (0.75 * length) / average)));
          expect(added).toBeLessThanOrEqual(most);
        },
      ),
    );
  });

  it("puts no match that could beat the bar before the oldest slot", () => {
    fc.assert(
      fc.property(relevance, slot, relevance, slot, (best, bestAt, other, otherAt) => {
        const request = window(Math.max(bestAt, otherAt) + DAY);
        const cut = oldestSlot(request, [row(best, bestAt)], other);
        const bar = rankScore(best, bestAt, request.nowMs, request.halfLifeMs);
        if (otherAt < cut) {
          expect(rankScore(other, otherAt, request.nowMs, request.halfLifeMs)).toBeLessThan(bar);
        }
      }),
    );
  });
});
