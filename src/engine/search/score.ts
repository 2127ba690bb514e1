import type { TextHit } from "./types.ts";

/** How much a brand-new document gains over an old one of equal relevance: up to 1.5 times. */
export const RECENCY_WEIGHT = 0.5;
export const DEFAULT_RECENCY_HALF_LIFE_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * The score of a hit, in [0, 1), higher is better:
 *
 *   score = r / (1 + r) × (1 + w · 2^(−age / halfLife)) / (1 + w)
 *
 * r is the backend's relevance (≥ 0: −bm25() in SQLite, an IDF-weighted ts_rank_cd in PostgreSQL),
 * age = max(0, now − createdAt), w = RECENCY_WEIGHT. The first factor maps any relevance into [0, 1)
 * without changing its order; the second is 1 for a document created now and tends to 1 / (1 + w)
 * with age. So relevance leads, and of two equally relevant documents the newer ranks first.
 */
export function hitScore(relevance: number, createdMs: number, nowMs: number, halfLifeMs: number): number {
  return rankScore(relevance, createdMs, nowMs, halfLifeMs) / (1 + RECENCY_WEIGHT);
}

/** hitScore without its constant factor 1 / (1 + w), which changes no order: what ranking compares. */
export function rankScore(relevance: number, createdMs: number, nowMs: number, halfLifeMs: number): number {
  const recency = 2 ** (-Math.max(0, nowMs - createdMs) / halfLifeMs);
  return (relevance / (1 + relevance)) * (1 + RECENCY_WEIGHT * recency);
}

/**
 * rankScore as an SQL expression (valid in SQLite and PostgreSQL), to rank every match in the
 * database and bring back only the best: `relevance`, `createdMs`, `now` and `halfLife` are SQL
 * expressions or parameters.
 */
export function rankScoreSql(relevance: string, createdMs: string, now: string, halfLife: string): string {
  const age = `(${now} - ${createdMs})`;
  return `(${relevance}) / (1 + ${relevance}) * (1 + ${RECENCY_WEIGHT} * power(2, -1.0 * (CASE WHEN ${age} > 0 THEN ${age} ELSE 0 END) / ${halfLife}))`;
}

/**
 * A match as a backend reads it (data is still JSON text). `slot` orders documents created in the
 * same millisecond (the later written is the newer); backends without it order those by id.
 */
export interface ScoredRow {
  id: string;
  data: string;
  created_at: string;
  created_ms: number;
  relevance: number;
  slot?: number;
}

/** The best `limit` rows by exact score, newest first among equals, as hits. */
export function toHits(rows: ScoredRow[], limit: number, nowMs: number, halfLifeMs: number): TextHit[] {
  return rows
    .map((row) => ({ row, score: hitScore(row.relevance, row.created_ms, nowMs, halfLifeMs) }))
    .sort(
      (a, b) =>
        b.score - a.score ||
        b.row.created_ms - a.row.created_ms ||
        (b.row.slot ?? 0) - (a.row.slot ?? 0) ||
        (a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0),
    )
    .slice(0, limit)
    .map(({ row, score }) => ({ id: row.id, data: JSON.parse(row.data), score, createdAt: row.created_at }));
}
