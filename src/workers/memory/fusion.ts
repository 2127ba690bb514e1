import { RECENCY_WEIGHT } from "../../engine/search/score.ts";

export type MatchKind = "text" | "vector";

export interface Candidate {
  id: string;
  createdAt: string;
}

/** A vector list's entry and its cosine similarity with the query. */
export interface Scored<T extends Candidate> {
  item: T;
  score: number;
}

export interface Fused<T extends Candidate> {
  item: T;
  /** The lists it was found in, text first. */
  matchedBy: MatchKind[];
  /** In [0, 1]: see fuse. */
  relevance: number;
}

/**
 * Hybrid recall's order. The candidates are what either list brought (text: BM25 × recency; vector:
 * cosine); each is then judged on two absolute scales, both in [0, 1]: how much of the query's words it
 * holds (`similarity`, what text recall orders by) and its cosine with the query, clipped at 0 (an entry
 * the vector list did not bring is given the list's last cosine, the most it can have). Relevance is the
 * better of the two weighed four times the other, (4 · max + min) / 5 (the cosine alone in vector mode),
 * times the recency term of the text index (score.ts: (1 + w · 2^(−age / halfLife)) / (1 + w)).
 *
 * Measured (`npm run bench retrieval`, recall@5 of paraphrases sharing no word with their fact, dense
 * stand-in embedder): reciprocal rank fusion 0.67, min-max scaled scores lower still, the mean of the
 * two scales 0.85, (2 · max + min) / 3 0.92, (4 · max + min) / 5 0.97 (vector alone 1.00; controls
 * sharing words 1.00 throughout). Rank and min-max forget how good a list's best is, and a mean lets a
 * few shared words outweigh a clear match by meaning; the better scale leading, with agreement still
 * counting, keeps both. Ties: the newer first, then by id.
 */
export function fuse<T extends Candidate>(
  ranked: { text: readonly T[]; vector: ReadonlyArray<Scored<T>> },
  options: {
    lists: number;
    limit: number;
    nowMs: number;
    halfLifeMs: number;
    similarity: (item: T) => number;
  },
): Array<Fused<T>> {
  const byId = new Map<string, { item: T; matchedBy: MatchKind[]; cosine?: number }>();
  for (const item of ranked.text) byId.set(item.id, { item, matchedBy: ["text"] });
  for (const { item, score } of ranked.vector) {
    const found = byId.get(item.id) ?? { item, matchedBy: [] };
    if (found.cosine !== undefined) continue;
    found.matchedBy.push("vector");
    found.cosine = score;
    byId.set(item.id, found);
  }
  const floor = ranked.vector.reduce((least, { score }) => Math.min(least, score), Number.POSITIVE_INFINITY);
  const vectorOf = (cosine: number | undefined) =>
    Math.min(1, Math.max(0, cosine ?? (Number.isFinite(floor) ? floor : 0)));
  const fused = [...byId.values()].map(({ item, matchedBy, cosine }) => {
    const created = Date.parse(item.createdAt);
    const age = Math.max(0, options.nowMs - (Number.isNaN(created) ? options.nowMs : created));
    const recency = (1 + RECENCY_WEIGHT * 2 ** (-age / options.halfLifeMs)) / (1 + RECENCY_WEIGHT);
    const meaning = options.lists >= 2 ? blend(options.similarity(item), vectorOf(cosine)) : vectorOf(cosine);
    return { item, matchedBy, relevance: Math.min(1, meaning * recency), created };
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

/** Two scores in [0, 1] as one: the better counts four times as much as the other (see fuse). */
function blend(a: number, b: number): number {
  return (4 * Math.max(a, b) + Math.min(a, b)) / 5;
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
