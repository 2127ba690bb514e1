import { RECENCY_WEIGHT } from "../../engine/search/score.ts";

/** Reciprocal rank fusion's constant: a list's first place counts 1/61, its tenth 1/70. */
export const RRF_K = 60;

export type MatchKind = "text" | "vector";

export interface Candidate {
  id: string;
  createdAt: string;
}

export interface Fused<T extends Candidate> {
  item: T;
  /** The lists it was found in, text first. */
  matchedBy: MatchKind[];
  /** In (0, 1]: see fuse. */
  relevance: number;
}

/**
 * Hybrid recall's order: reciprocal rank fusion of the text list (BM25 × recency, best first) and the
 * vector list (cosine, best first), times the recency term the text index uses (score.ts):
 *
 *   relevance = Σ over the lists holding it of 1 / (k + rank)   (rank from 1, k = 60)
 *               × (k + 1) / lists                               (1 for the first of every list)
 *               × (1 + w · 2^(−age / halfLife)) / (1 + w)       (w = RECENCY_WEIGHT)
 *
 * RRF needs no common scale between BM25 and cosine, and an entry both lists found outranks one only
 * one did at a similar place. Ties: the newer first, then by id. `lists`: how many lists were asked
 * (an empty one still counts, so relevance stays comparable within a mode).
 */
export function fuse<T extends Candidate>(
  ranked: { text: readonly T[]; vector: readonly T[] },
  options: { lists: number; limit: number; nowMs: number; halfLifeMs: number },
): Array<Fused<T>> {
  const byId = new Map<string, { item: T; matchedBy: MatchKind[]; rrf: number }>();
  const add = (kind: MatchKind, list: readonly T[]) =>
    list.forEach((item, index) => {
      const found = byId.get(item.id) ?? { item, matchedBy: [], rrf: 0 };
      found.matchedBy.push(kind);
      found.rrf += 1 / (RRF_K + index + 1);
      byId.set(item.id, found);
    });
  add("text", ranked.text);
  add("vector", ranked.vector);
  const scale = (RRF_K + 1) / Math.max(1, options.lists);
  const fused = [...byId.values()].map(({ item, matchedBy, rrf }) => {
    const created = Date.parse(item.createdAt);
    const age = Math.max(0, options.nowMs - (Number.isNaN(created) ? options.nowMs : created));
    const recency = (1 + RECENCY_WEIGHT * 2 ** (-age / options.halfLifeMs)) / (1 + RECENCY_WEIGHT);
    return { item, matchedBy, relevance: Math.min(1, rrf * scale * recency), created };
  });
  fused.sort(
    (a, b) =>
      b.relevance - a.relevance ||
      b.created - a.created ||
      (a.item.id < b.item.id ? -1 : a.item.id > b.item.id ? 1 : 0),
  );
  return fused
    .slice(0, options.limit)
    .map(({ item, matchedBy, relevance }) => ({ item, matchedBy, relevance }));
}

/**
 * A result's `score`, in [0, 1] and comparable across modes and queries: the larger of the text
 * similarity (similarity.ts: the query's words the entry holds) and the cosine similarity of the
 * query's and the entry's vectors clipped at 0 (a real model's unrelated texts sit near 0; a negative
 * cosine says no more than 0 does).
 */
export function hybridScore(textSimilarity: number, cosine: number | undefined): number {
  const vector = cosine === undefined ? 0 : Math.min(1, Math.max(0, cosine));
  return Math.round(Math.max(textSimilarity, vector) * 1e6) / 1e6;
}
