import type { DatabaseSync, StatementSync } from "node:sqlite";
import { rankExtensionReady } from "../state/sqlite-extensions.ts";
import {
  type Candidate,
  floor,
  keepBest,
  mostPerPhrase,
  neededPhrases,
  oldestSlot,
  relevanceToReach,
} from "./rank-bounds.ts";
import { rankScore, rankScoreSql, type ScoredRow } from "./score.ts";
import { countOf, TableCounts } from "./sqlite-counts.ts";

/** The newest-first scan's first chunk of rows; each next one is four times larger (up to its budget). */
const FIRST_CHUNK = 64;
/**
 * Extra rows brought back, ranked by slot time, for the caller to re-score by exact creation time:
 * slots sit a few ms late when documents of a scope share a creation millisecond.
 */
const RESCORE_MARGIN = 16;

export interface RankerOptions {
  /** A scope with fewer matches than this is ranked in one statement (cheapest for few matches). */
  rankAllBelow?: number;
  /** Every query ranks every match in one statement: the reference the tests and benchmarks compare with. */
  exhaustive?: boolean;
  /**
   * How many matches the newest-first scan reads before the tiers rank the older rest. 1024 by default:
   * at 1 M entries 2048 cost 10–15 % more on average for a few ms less at p99 (bench/memory-scale.ts).
   */
  scanBudget?: number;
  /** false: rank with FTS5's bm25() even where agentos_bm25 is loaded (tests of that path). */
  native?: boolean;
  /**
   * A candidate list (RankRequest.candidates) scans this many matches newest first, then ranks the
   * older matches of the phrases held by at most `rarePostings` documents of the table: its work stays
   * within candidateScan + rarePostings per rare phrase.
   */
  candidateScan?: number;
  rarePostings?: number;
}

export interface RankRequest {
  /** The FTS5 MATCH expression and its terms, each quoted. */
  match: string;
  phrases: string[];
  /** The scope's rowid range. */
  first: bigint;
  last: bigint;
  /** The creation time (ms) that slot 0 stands for. */
  slotEpochMs: number;
  /** How many hits are asked for (a few more rows come back, see RESCORE_MARGIN). */
  limit: number;
  nowMs: number;
  halfLifeMs: number;
  /** At most this many documents in the scope, when known: a small scope is ranked without counting. */
  docsAtMost?: number;
  /**
   * A candidate list for fusion (hybrid recall): when the newest-first scan does not settle, only the
   * older matches holding a rare phrase (RankerOptions.rarePostings) are ranked, not every older match.
   */
  candidates?: boolean;
}

/** A request as the statements take it: `weights` is agentos_bm25's counts argument (none for bm25()). */
type Ranking = RankRequest & { weights: string | undefined };

/**
 * Finds the best matches of a scope by score (BM25 with recency, see score.ts) without ranking
 * every match when it need not. A match's slot time is never earlier than its creation time, so
 * reading matches newest first (rowid order, no sort) the recency factor of every match still unread
 * is at most that of the last one read; and no document's relevance exceeds Σ idf × (k1 + 1) over
 * the query's terms. Once `limit` matches score at least that bound, no unread match can beat them.
 * With a recency half-life of weeks and a history of months, a few hundred matches usually settle a
 * query that matches tens of thousands. Queries with few matches are ranked in one statement. A scan
 * that does not settle within its budget leaves the older matches to tiers (byTiers: per phrase,
 * rarest first, each over the recent past its phrases can still win in), whose statements skip
 * reading the length of a match that cannot reach the bar (agentos_bm25's floor).
 */
export class SqliteRanker {
  private readonly statements: Record<string, StatementSync>;
  private readonly rankAllBelow: number;
  private readonly exhaustive: boolean;
  private readonly scanBudget: number;
  private readonly candidateScan: number;
  private readonly rarePostings: number;
  /** Relevance is agentos_bm25 with the counts this ranker keeps (see fts5-rank.c), else bm25(). */
  readonly native: boolean;
  /** The table's row count, phrases' posting counts and scopes' sizes, kept between queries. */
  private readonly counts: TableCounts;

  constructor(db: DatabaseSync, options: RankerOptions = {}) {
    this.rankAllBelow = options.rankAllBelow ?? 2048;
    this.exhaustive = options.exhaustive === true;
    this.scanBudget = options.scanBudget ?? 1024;
    this.candidateScan = options.candidateScan ?? 1024;
    this.rarePostings = options.rarePostings ?? 2048;
    this.native = options.native !== false && rankExtensionReady(db);
    this.counts = new TableCounts(db, this.native);
    // Each statement's last parameters are agentos_bm25's: the phrases' document counts, how many
    // phrases weigh (see bestHolding) and the relevance floor (see floor); bm25() takes none.
    const relevance = (at: number) =>
      this.native ? `agentos_bm25(search_fts, ?${at}, ?${at + 1}, ?${at + 2})` : "-bm25(search_fts)";
    this.statements = {
      // Counts the scope's matches up to a cap, so that counting a large scope stays cheap.
      matches: db.prepare(
        `SELECT count(*) AS n FROM (SELECT 1 FROM search_fts
         WHERE search_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3 LIMIT ?4)`,
      ),
      // A chunk of the newest-first scan: the matches of [?2, ?3] newest first, at most ?4.
      newestFirst: db.prepare(
        `SELECT rowid - ?2 AS slot, ${relevance(5)} AS relevance FROM search_fts
         WHERE search_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3 ORDER BY rowid DESC LIMIT ?4`,
      ),
      // The documents at slots ?2 (a JSON array) of the scope whose first rowid is ?1.
      docs: db.prepare(
        `SELECT rowid - ?1 AS slot, id, data, created_at, created_ms FROM search_docs
         WHERE rowid IN (SELECT ?1 + value FROM json_each(?2))`,
      ),
      // Every match of the range ranked in the database; only the best few are joined to their documents.
      best: db.prepare(
        `SELECT d.id, d.data, d.created_at, d.created_ms, m.relevance, m.rowid - ?2 AS slot
         FROM (SELECT rowid, ${relevance(9)} AS relevance FROM search_fts
               WHERE search_fts MATCH ?1 AND rowid BETWEEN ?8 AND ?3
               ORDER BY ${rankScoreSql("relevance", "(?4 + (rowid - ?2))", "?5", "?6")} DESC LIMIT ?7) AS m
         JOIN search_docs AS d ON d.rowid = m.rowid`,
      ),
      // As best, among the matches that also hold one of ?8's phrases: relevance is still over
      // every phrase of ?1, but only those matches are scored.
      bestHolding: db.prepare(
        `SELECT d.id, d.data, d.created_at, d.created_ms, m.relevance, m.rowid - ?2 AS slot
         FROM (SELECT rowid, ${relevance(10)} AS relevance FROM search_fts
               WHERE search_fts MATCH ?1 AND rowid BETWEEN ?9 AND ?3
                 AND +rowid IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?8 AND rowid BETWEEN ?9 AND ?3)
               ORDER BY ${rankScoreSql("relevance", "(?4 + (rowid - ?2))", "?5", "?6")} DESC LIMIT ?7) AS m
         JOIN search_docs AS d ON d.rowid = m.rowid`,
      ),
    };
    this.statements.newestFirst.setReturnArrays(true);
  }

  rank(rankRequest: RankRequest): ScoredRow[] {
    const docs = this.counts.rows();
    // agentos_bm25 ranks with the counts kept here; bm25() counts itself (they are read below for bounds).
    const kept = this.native ? this.counts.postings(rankRequest.phrases, docs) : undefined;
    const request: Ranking = { ...rankRequest, weights: kept?.join(",") };
    const small = request.docsAtMost !== undefined && request.docsAtMost < this.rankAllBelow;
    if (small || this.exhaustive || this.fewMatches(request, kept, docs)) {
      return this.best(request, request.first, request.last);
    }
    const postings = kept ?? this.counts.postings(request.phrases, docs);
    const most = mostPerPhrase(postings, docs);
    const maxRelevance = most.reduce((sum, value) => sum + value, 0);

    const budget = request.candidates ? this.candidateScan : this.scanBudget;
    const { top, settled, lastSlot } = this.newestFirst(request, budget, maxRelevance);
    const scanned = this.documents(request, top);
    // Not settled within the budget: rank the older rest in the database and merge.
    if (settled) return scanned;
    return request.candidates
      ? scanned.concat(this.rareHolders(request, scanned, { postings, most, maxRelevance }, lastSlot))
      : this.byTiers(request, scanned, most, lastSlot);
  }

  /**
   * A candidate list's older matches (before lastSlot): only those holding a needed phrase that is rare
   * in the table (at most rarePostings documents), from the recency cut-off on; the vector list brings
   * the older related entries.
   */
  private rareHolders(
    request: Ranking,
    scanned: ScoredRow[],
    { postings, most, maxRelevance }: { postings: number[]; most: number[]; maxRelevance: number },
    lastSlot: number,
  ): ScoredRow[] {
    const rare = [...neededPhrases(request, scanned, most, lastSlot)].filter(
      (at) => postings[at] <= this.rarePostings,
    );
    if (rare.length === 0) return [];
    // Recency cut-off: a match created before `oldest` scores below the limit-th best even at the most
    // relevant possible, so only the older matches from there on are ranked.
    const oldest = oldestSlot(request, scanned, maxRelevance);
    if (oldest > lastSlot - 1) return [];
    const holding = rare.map((at) => request.phrases[at]).join(" OR ");
    const from = request.first + BigInt(oldest);
    const last = request.first + BigInt(lastSlot) - 1n;
    return this.bestHolding(request, from, last, holding, floor(request, scanned, lastSlot));
  }

  /**
   * Whether the scope surely has fewer than rankAllBelow matches, which one statement ranks fastest:
   * when the phrases are that rare in the whole table, or when a count of the scope's matches says so.
   * FTS5 reads a doclist backwards (the scan) at a cost of up to a millisecond to find its place,
   * forwards (the count, the statement) at a fraction of that; but counting a large scope's matches
   * costs as much, and there they are nearly always many, so large scopes are not counted.
   */
  private fewMatches(request: Ranking, kept: number[] | undefined, rows: number): boolean {
    if (kept && kept.reduce((sum, n) => sum + n, 0) < this.rankAllBelow) return true;
    if (this.counts.isLarge(request.first, request.last, rows)) return false;
    const { match, first, last } = request;
    return countOf(this.statements.matches, match, first, last, this.rankAllBelow) < this.rankAllBelow;
  }

  /**
   * Ranks the older matches (before lastSlot) tier by tier, rarest phrase first. Tier k holds the
   * matches whose rarest phrase is the k-th rarest: they hold only it and commoner phrases, so their
   * relevance is at most the sum of those phrases' most, and a recency cut-off follows from that sum
   * and the limit-th best score so far (oldestSlot). So the common phrases, which hold most matches
   * but add little, are ranked only over the recent past where they can still win; and each tier's
   * best raise the bar for the next. Every match holds one of the phrases: the tiers leave none out.
   */
  private byTiers(request: Ranking, scanned: ScoredRow[], most: number[], lastSlot: number): ScoredRow[] {
    const pool = [...scanned];
    const seen = new Set(scanned.map((row) => row.slot));
    const last = request.first + BigInt(lastSlot) - 1n;
    const rarestFirst = most.map((_, at) => at).sort((a, b) => most[b] - most[a]);
    for (const [tier, at] of rarestFirst.entries()) {
      const reach = rarestFirst.slice(tier).reduce((sum, phrase) => sum + most[phrase], 0);
      const oldest = oldestSlot(request, pool, reach);
      // Commoner phrases reach less: no later tier can reach further back.
      if (oldest > lastSlot - 1) break;
      const from = request.first + BigInt(oldest);
      const need = floor(request, pool, lastSlot);
      for (const row of this.bestHolding(request, from, last, request.phrases[at], need)) {
        if (!seen.has(row.slot)) pool.push(row);
        seen.add(row.slot);
      }
    }
    return pool;
  }

  /**
   * Reads matches newest first until `limit` of them score at least what any unread match could
   * (maxRelevance at the last slot read: settled), or none is left (settled too), or `budget` are read;
   * keeps the best few by their bound.
   * Rows come in chunks of growing size, as arrays: a statement's row costs a quarter of an iterated one.
   */
  private newestFirst(request: Ranking, budget: number, maxRelevance: number) {
    const { limit, slotEpochMs, nowMs, halfLifeMs } = request;
    const keep = limit + RESCORE_MARGIN;
    const top: Candidate[] = [];
    let read = 0;
    let lastSlot = -1;
    let upper = request.last;
    for (let chunk = FIRST_CHUNK; read < budget; chunk *= 4) {
      const size = Math.min(chunk, budget - read);
      // A match of this chunk below this relevance would not enter `top` (its least bound only rises).
      const need = top.length < keep ? 0 : relevanceToReach(request, top[keep - 1].bound, lastSlot);
      const rows = this.statements.newestFirst.all(
        request.match,
        request.first,
        upper,
        size,
        ...this.weighing(request, need),
      ) as unknown as Array<[slot: number, relevance: number | null]>;
      for (const [slot, relevance] of rows) {
        read++;
        lastSlot = slot;
        if (relevance !== null) {
          const bound = rankScore(relevance, slotEpochMs + slot, nowMs, halfLifeMs);
          keepBest(top, keep, { slot, relevance, bound });
        }
        // Every unread match is older and no more relevant than the most relevant possible.
        if (
          top.length >= limit &&
          top[limit - 1].bound >= rankScore(maxRelevance, slotEpochMs + slot, nowMs, halfLifeMs)
        )
          return { top, settled: true, lastSlot };
      }
      if (rows.length < size) return { top, settled: true, lastSlot };
      upper = request.first + BigInt(lastSlot) - 1n;
    }
    return { top, settled: false, lastSlot };
  }

  /**
   * As best, among the matches that also hold one of `holding`'s phrases. agentos_bm25 weighs only the
   * query's own phrases, so the filter is ANDed onto the query: FTS5 then walks the holding phrases'
   * postings and seeks the others'. bm25() would weigh the filter's phrases too: there the filter is a
   * list of rowids, and every match of the query is tested against it.
   */
  private bestHolding(
    request: Ranking,
    from: bigint,
    last: bigint,
    holding: string,
    floor: number,
  ): ScoredRow[] {
    if (this.native) {
      const match = `(${request.match}) AND (${holding})`;
      return this.ranked(this.statements.best, { ...request, match }, last, floor, from);
    }
    return this.ranked(this.statements.bestHolding, request, last, floor, holding, from);
  }

  /** The best matches of [from, last] by score; slots count from the scope's first rowid. */
  private best(request: Ranking, from: bigint, last: bigint): ScoredRow[] {
    return this.ranked(this.statements.best, request, last, 0, from);
  }

  /**
   * Runs a ranking statement: its first seven parameters are the request's, then `more`, then
   * agentos_bm25's. A match below `floor` relevance comes back with none (null) or not at all.
   */
  private ranked(
    statement: StatementSync,
    request: Ranking,
    last: bigint,
    floor: number,
    ...more: Array<string | bigint>
  ) {
    const { match, first, slotEpochMs, nowMs, halfLifeMs, limit } = request;
    const rows = statement.all(
      match,
      first,
      last,
      slotEpochMs,
      nowMs,
      halfLifeMs,
      limit + RESCORE_MARGIN,
      ...more,
      ...this.weighing(request, floor),
    ) as unknown as ScoredRow[];
    return rows.filter((row) => row.relevance !== null);
  }

  /** agentos_bm25's arguments after the table: the counts, how many phrases weigh, the floor. */
  private weighing(request: Ranking, floor: number): Array<string | number> {
    return request.weights === undefined ? [] : [request.weights, request.phrases.length, floor];
  }

  /** The candidates' documents, in the candidates' order (a document deleted meanwhile is left out). */
  private documents(request: RankRequest, candidates: Candidate[]): ScoredRow[] {
    if (candidates.length === 0) return [];
    const rows = this.statements.docs.all(
      request.first,
      JSON.stringify(candidates.map((candidate) => candidate.slot)),
    ) as unknown as Array<Omit<ScoredRow, "relevance"> & { slot: number }>;
    const bySlot = new Map(rows.map((row) => [row.slot, row]));
    return candidates.flatMap(({ slot, relevance }) => {
      const row = bySlot.get(slot);
      return row ? [{ ...row, relevance, slot }] : [];
    });
  }
}
