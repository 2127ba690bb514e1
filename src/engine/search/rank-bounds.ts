import { RECENCY_WEIGHT, rankScore, type ScoredRow } from "./score.ts";

/**
 * The bounds the SQLite ranker prunes by (sqlite-rank.ts), as plain functions of a query's scoring
 * window: what a match can score at most, the slot before which no match can win, the relevance a
 * match needs to. Every bound is widened by BOUND_SLACK against rounding, so pruning never drops a
 * match that ties.
 */

/** FTS5's BM25 constants: a term adds at most idf × (k1 + 1) to a document's relevance. */
const BM25_K1 = 1.2;
const IDF_FLOOR = 1e-6;
/** Bounds are widened by this much against rounding. */
const BOUND_SLACK = 1e-9;

/** What scoring a query's matches depends on (a RankRequest has it all). */
export interface ScoreWindow {
  limit: number;
  nowMs: number;
  halfLifeMs: number;
  /** The creation time (ms) that slot 0 stands for. */
  slotEpochMs: number;
}

/** A match read by the scan; `bound` is its score at slot time, at least its score at creation time. */
export type Candidate = { slot: number; relevance: number; bound: number };

/**
 * The most each phrase can add to a relevance: FTS5's idf (from counts at most those bm25() makes, so
 * at least its idf) times k1 + 1.
 */
export function mostPerPhrase(postings: number[], docs: number): number[] {
  return postings.map((n) => {
    const idf = Math.log((docs - n + 0.5) / (n + 0.5));
    return (idf > 0 ? idf : IDF_FLOOR) * (BM25_K1 + 1);
  });
}

/**
 * The first slot a match can be at and still beat the `limit`-th best score of `rows`: at slot time t
 * (never earlier than its creation time) a match scores at most rankScore(maxRelevance, t), which
 * falls with age. Slot 0 when every age may still win.
 */
export function oldestSlot(request: ScoreWindow, rows: ScoredRow[], maxRelevance: number): number {
  if (rows.length < request.limit) return 0;
  const threshold = limitthBest(request, rows) / (1 + BOUND_SLACK);
  const relevance = maxRelevance / (1 + maxRelevance);
  // rankScore = relevance × (1 + w × 2^(−age / halfLife)) < threshold once 2^(−age / halfLife) < share.
  const share = (threshold / relevance - 1) / RECENCY_WEIGHT;
  if (!(share > 0)) return 0;
  if (share >= 1) return Number.POSITIVE_INFINITY;
  const age = -Math.log2(share) * request.halfLifeMs;
  const slot = Math.floor(request.nowMs - age - request.slotEpochMs) - 1;
  return Number.isFinite(slot) && slot > 0 ? slot : 0;
}

/**
 * The phrases (their positions) an older match must hold to beat the `limit`-th best score of `rows`
 * (MaxScore): a match holding only phrases of a set scores at most rankScore(Σ their most, the last
 * slot read), so the least relevant phrases, as many as stay below that score together, cannot lift
 * an older match into the result alone. Empty when no older match can make it at all.
 */
export function neededPhrases(
  request: ScoreWindow,
  rows: ScoredRow[],
  most: number[],
  lastSlot: number,
): Set<number> {
  const all = new Set(most.map((_, at) => at));
  if (rows.length < request.limit) return all;
  const threshold = limitthBest(request, rows);
  const bound = (relevance: number) =>
    rankScore(relevance, request.slotEpochMs + lastSlot, request.nowMs, request.halfLifeMs) *
    (1 + BOUND_SLACK);
  const order = most.map((value, at) => ({ value, at })).sort((a, b) => a.value - b.value);
  let sum = 0;
  let skipped = 0;
  while (skipped < order.length && bound(sum + order[skipped].value) < threshold)
    sum += order[skipped++].value;
  return new Set(order.slice(skipped).map(({ at }) => at));
}

/** The `limit`-th best exact score of `rows` (which hold at least `limit`). */
function limitthBest(request: ScoreWindow, rows: ScoredRow[]): number {
  const scores = rows
    .map((row) => rankScore(row.relevance, row.created_ms, request.nowMs, request.halfLifeMs))
    .sort((a, b) => b - a);
  return scores[request.limit - 1];
}

/**
 * The relevance an older match (before lastSlot) needs to beat the `limit`-th best score of `rows`, at
 * the least: as if it were as recent as lastSlot (0 while fewer than `limit` rows are known). Below it,
 * agentos_bm25 skips reading a match's length (see fts5-rank.c).
 */
export function floor(request: ScoreWindow, rows: ScoredRow[], lastSlot: number): number {
  return rows.length < request.limit ? 0 : relevanceToReach(request, limitthBest(request, rows), lastSlot);
}

/**
 * The least relevance at which a match at `slot` or older scores `score` (a little less, against
 * rounding): rankScore = r / (1 + r) × (1 + w × 2^(−age / halfLife)) ≥ score needs r / (1 + r) ≥ share.
 */
export function relevanceToReach(request: ScoreWindow, score: number, slot: number): number {
  const age = Math.max(0, request.nowMs - (request.slotEpochMs + slot));
  const share = score / (1 + BOUND_SLACK) / (1 + RECENCY_WEIGHT * 2 ** (-age / request.halfLifeMs));
  if (!(share > 0)) return 0;
  if (share >= 1) return Number.POSITIVE_INFINITY;
  return (share / (1 - share)) * (1 - BOUND_SLACK);
}

/** Keeps `top` the best `count` candidates by bound, best first (count is small: a sorted insert). */
export function keepBest(top: Candidate[], count: number, candidate: Candidate): void {
  if (top.length === count && candidate.bound <= top[count - 1].bound) return;
  let at = top.length;
  while (at > 0 && top[at - 1].bound < candidate.bound) at--;
  top.splice(at, 0, candidate);
  if (top.length > count) top.pop();
}
