import type { DatabaseSync, StatementSync } from "node:sqlite";

/** Phrases whose posting counts are kept (about 100 bytes each; the least recently used goes first). */
const MAX_COUNTED_PHRASES = 16_384;
/** Kept posting counts are recounted once the table has grown by this fraction (1/64) of its size then. */
const RECOUNT_GROWTH = 64;
/**
 * A scope of at least this many documents skips counting its matches before a query (SqliteRanker.fewMatches): such
 * a scope nearly always has more than rankAllBelow, and counting them cost about 1 ms at 1 M entries.
 */
const LARGE_SCOPE = 32_768;
/** Scopes whose size is remembered (all are forgotten when more are). */
const MAX_SIZED_SCOPES = 10_000;

/**
 * What the SQLite ranker (sqlite-rank.ts) keeps of the text table between queries: its row count, how
 * many documents hold each phrase, and whether a scope is large. Each is counted in the table when
 * needed and kept while the table has not changed enough to make it wrong.
 */
export class TableCounts {
  private readonly statements: Record<string, StatementSync>;
  /** true: the counts are agentos_bm25's own (near the truth is enough); false: they bound bm25()'s. */
  private readonly native: boolean;
  /** Posting counts per phrase, least recently used first (see postings); deletions counted from postingsDeletes. */
  private readonly counted = new Map<string, { n: number; docs: number }>();
  private postingsDeletes = -1;
  /** Per scope (its first rowid): its documents (counted up to LARGE_SCOPE) and the table's rows then. */
  private readonly scopeSizes = new Map<bigint, { docs: number; rows: number }>();

  constructor(db: DatabaseSync, native: boolean) {
    this.native = native;
    this.statements = {
      // bm25()'s N is FTS5's row count (the averages record), which a contentless_delete table never
      // lowers on delete: its first varint, and search_meta's count of every row ever inserted.
      averages: db.prepare("SELECT block FROM search_fts_data WHERE id = 1"),
      rows: db.prepare("SELECT value AS n FROM search_meta WHERE key = 'rows'"),
      deletes: db.prepare("SELECT value AS n FROM search_meta WHERE key = 'deletes'"),
      postings: db.prepare("SELECT count(*) AS n FROM search_fts WHERE search_fts MATCH ?"),
      // Counts the scope's documents up to a cap.
      scopeDocs: db.prepare(
        "SELECT count(*) AS n FROM (SELECT 1 FROM search_docs WHERE rowid BETWEEN ?1 AND ?2 LIMIT ?3)",
      ),
    };
  }

  /**
   * At least FTS5's row count N, which bm25() takes for its idf (which grows with N): the averages
   * record may lag inserts of a transaction still open, search_meta's `rows` never does.
   */
  rows(): number {
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
  postings(phrases: string[], docs: number): number[] {
    const deletes = countOf(this.statements.deletes);
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
      const n = countOf(this.statements.postings, phrase);
      const oldest = this.counted.keys().next();
      if (this.counted.size >= MAX_COUNTED_PHRASES && !oldest.done) this.counted.delete(oldest.value);
      this.counted.set(phrase, { n, docs });
      return n;
    });
  }

  /**
   * Whether the scope holds at least LARGE_SCOPE documents. Counted once, and again only once the
   * table has grown enough for the scope to have got there (a shrunken scope may stay large: that
   * only skips a count).
   */
  isLarge(first: bigint, last: bigint, rows: number): boolean {
    const known = this.scopeSizes.get(first);
    if (known && (known.docs >= LARGE_SCOPE || known.docs + (rows - known.rows) < LARGE_SCOPE))
      return known.docs >= LARGE_SCOPE;
    const docs = countOf(this.statements.scopeDocs, first, last, LARGE_SCOPE);
    if (this.scopeSizes.size >= MAX_SIZED_SCOPES) this.scopeSizes.clear();
    this.scopeSizes.set(first, { docs, rows });
    return docs >= LARGE_SCOPE;
  }
}

/** A one-row counting statement's `n`. */
export function countOf(statement: StatementSync, ...values: Array<string | bigint | number>): number {
  return Number((statement.get(...values) as { n: number | bigint }).n);
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
