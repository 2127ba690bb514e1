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

/** Phrases whose posting counts are kept (about 100 bytes each; the least recently used goes first). */
const MAX_COUNTED_PHRASES = 16_384;
/** Kept posting counts are recounted once the table has grown by this fraction (1/64) of its size then. */
const RECOUNT_GROWTH = 64;
/**
 * A scope of at least this many documents skips counting its matches before a query (see rank): such
 * a scope nearly always has more than rankAllBelow, and counting them cost about 1 ms at 1 M entries.
 */
const LARGE_SCOPE = 32_768;
/** Scopes whose size is remembered (all are forgotten when more are). */
const MAX_SIZED_SCOPES = 10_000;
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
  /** Posting counts per phrase, least recently used first (see postings); deletions counted from postingsDeletes. */
  private readonly counted = new Map<string, { n: number; docs: number }>();
  private postingsDeletes = -1;
  /** Per scope (its first rowid): its documents (counted up to LARGE_SCOPE) and the table's rows then. */
  private readonly scopeSizes = new Map<bigint, { docs: number; rows: number }>();

  constructor(db: DatabaseSync, options: RankerOptions = {}) {
    this.rankAllBelow = options.rankAllBelow ?? 2048;
    this.exhaustive = options.exhaustive === true;
    this.scanBudget = options.scanBudget ?? 1024;
    this.candidateScan = options.candidateScan ?? 1024;
    this.rarePostings = options.rarePostings ?? 2048;
    this.native = options.native !== false && rankExtensionReady(db);
    // Each statement's last parameters are agentos_bm25's: the phrases' document counts, how many
    // phrases weigh (see bestHolding) and the relevance floor (see floor); bm25() takes none.
    const relevance = (at: number) =>
      this.native ? `agentos_bm25(search_fts, ?${at}, ?${at + 1}, ?${at + 2})` : "-bm25(search_fts)";
    this.statements = {
      // bm25()'s N is FTS5's row count (the averages record), which a contentless_delete table never
      // lowers on delete: its first varint, and search_meta's count of every row ever inserted.
      averages: db.prepare("SELECT block FROM search_fts_data WHERE id = 1"),
      rows: db.prepare("SELECT value AS n FROM search_meta WHERE key = 'rows'"),
      deletes: db.prepare("SELECT value AS n FROM search_meta WHERE key = 'deletes'"),
      postings: db.prepare("SELECT count(*) AS n FROM search_fts WHERE search_fts MATCH ?"),
      // Counts the scope's matches up to a cap, so that counting a large scope stays cheap.
      matches: db.prepare(
        `SELECT count(*) AS n FROM (SELECT 1 FROM search_fts
         WHERE search_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3 LIMIT ?4)`,
      ),
      // Counts the scope's documents up to a cap.
      scopeDocs: db.prepare(
        "SELECT count(*) AS n FROM (SELECT 1 FROM search_docs WHERE rowid BETWEEN ?1 AND ?2 LIMIT ?3)",
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
    const docs = this.rowCount();
    // agentos_bm25 ranks with the counts kept here; bm25() counts itself (they are read below for bounds).
    const kept = this.native ? this.postings(rankRequest.phrases, docs) : undefined;
    const request: Ranking = { ...rankRequest, weights: kept?.join(",") };
    const small = request.docsAtMost !== undefined && request.docsAtMost < this.rankAllBelow;
    if (small || this.exhaustive || this.fewMatches(request, kept, docs)) {
      return this.best(request, request.first, request.last);
    }
    const postings = kept ?? this.postings(request.phrases, docs);
    const most = mostPerPhrase(postings, docs);
    const maxRelevance = most.reduce((sum, value) => sum + value, 0);

    const budget = request.candidates ? this.candidateScan : this.scanBudget;
    const { top, settled, lastSlot } = this.newestFirst(request, budget, maxRelevance);
    const scanned = this.documents(request, top);
    // Not settled within the budget: rank the older rest in the database and merge.
    if (settled) return scanned;
    return request.candidates
      ? scanned.concat(this.rareHolders(request, scanned, postings, most, lastSlot))
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
    postings: number[],
    most: number[],
    lastSlot: number,
  ): ScoredRow[] {
    const rare = [...neededPhrases(request, scanned, most, lastSlot)].filter(
      (at) => postings[at] <= this.rarePostings,
    );
    if (rare.length === 0) return [];
    // Recency cut-off: a match created before `oldest` scores below the limit-th best even at the most
    // relevant possible, so only the older matches from there on are ranked.
    const maxRelevance = most.reduce((sum, value) => sum + value, 0);
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
    if (this.isLarge(request.first, request.last, rows)) return false;
    const { match, first, last } = request;
    return this.count(this.statements.matches, match, first, last, this.rankAllBelow) < this.rankAllBelow;
  }

  /**
   * Whether the scope holds at least LARGE_SCOPE documents. Counted once, and again only once the
   * table has grown enough for the scope to have got there (a shrunken scope may stay large: that
   * only skips a count).
   */
  private isLarge(first: bigint, last: bigint, rows: number): boolean {
    const known = this.scopeSizes.get(first);
    if (known && (known.docs >= LARGE_SCOPE || known.docs + (rows - known.rows) < LARGE_SCOPE))
      return known.docs >= LARGE_SCOPE;
    const docs = this.count(this.statements.scopeDocs, first, last, LARGE_SCOPE);
    if (this.scopeSizes.size >= MAX_SIZED_SCOPES) this.scopeSizes.clear();
    this.scopeSizes.set(first, { docs, rows });
    return docs >= LARGE_SCOPE;
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
   * At least FTS5's row count N, which bm25() takes for its idf (which grows with N): the averages
   * record may lag inserts of a transaction still open, search_meta's `rows` never does.
   */
  private rowCount(): number {
    const row = this.statements.averages.get() as { block: Uint8Array } | undefined;
    const rows = this.statements.rows.get() as { n: number | bigint } | undefined;
    return Math.max(row ? leadingVarint(row.block) : 0, Number(rows?.n ?? 0));
  }

  /**
   * How many documents of the table hold each phrase: counted once (a full read of the phrase's
   * postings, as long as bm25()'s own count) and kept until the table has grown by 1/RECOUNT_GROWTH.
   * With bm25(), which counts afresh, these counts bound its idf only while they are at most the true
   * ones: inserts only raise those, but any deletion (the `deletes` counter of search_meta, kept by
   * every connection that writes the index) drops every kept count. agentos_bm25 ranks with these very
   * counts, so they need only stay near the truth: dropped once deletions reach 1/RECOUNT_GROWTH too.
   * The least recently used count goes first when MAX_COUNTED_PHRASES are kept.
   */
  private postings(phrases: string[], docs: number): number[] {
    const deletes = this.count(this.statements.deletes);
    const deleted = deletes - this.postingsDeletes;
    const stale = this.native ? deleted < 0 || deleted * RECOUNT_GROWTH > docs : deleted !== 0;
    if (this.postingsDeletes < 0 || stale) {
      this.counted.clear();
      this.postingsDeletes = deletes;
    }
    return phrases.map((phrase) => {
      const known = this.counted.get(phrase);
      this.counted.delete(phrase);
      if (known && (docs - known.docs) * RECOUNT_GROWTH <= known.docs) {
        this.counted.set(phrase, known);
        return known.n;
      }
      const n = this.count(this.statements.postings, phrase);
      const oldest = this.counted.keys().next();
      if (this.counted.size >= MAX_COUNTED_PHRASES && !oldest.done) this.counted.delete(oldest.value);
      this.counted.set(phrase, { n, docs });
      return n;
    });
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

  private count(statement: StatementSync, ...values: Array<string | bigint | number>): number {
    return Number((statement.get(...values) as { n: number | bigint }).n);
  }
}

/** The first SQLite varint of a record (big-endian, 7 bits a byte, the 9th byte whole). */
export function leadingVarint(bytes: Uint8Array): number {
  let value = 0;
  for (let at = 0; at < bytes.length && at < 9; at++) {
    if (at === 8) return value * 256 + bytes[at];
    value = value * 128 + (bytes[at] & 0x7f);
    if (bytes[at] < 0x80) return value;
  }
  return value;
}
