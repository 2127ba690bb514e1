import type { DatabaseSync, StatementSync } from "node:sqlite";
import { nowMs } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import type { MaybePromise } from "../../shared/maybe-promise.ts";
import { openSqliteConnection, type SqliteConnection } from "../state/sqlite-connection.ts";
import { COMMON_TERM_WINDOW, informativeTerms, MIN_ENTRIES } from "./common-terms.ts";
import { queryTerms } from "./query.ts";
import { DEFAULT_RECENCY_HALF_LIFE_MS, toHits } from "./score.ts";
import { countOf, leadingVarint } from "./sqlite-counts.ts";
import { type IdleMergeOptions, IdleMerger } from "./sqlite-merge.ts";
import { type RankerOptions, SqliteRanker } from "./sqlite-rank.ts";
import {
  LAST_SLOT,
  lastOnPage,
  MAX_SCOPES,
  SLOT_BITS,
  SLOT_EPOCH_MS,
  SLOTS,
  scopeEnd,
} from "./sqlite-rowids.ts";
import { keepScopeCounts } from "./sqlite-scope-docs.ts";
import type { TextDoc, TextHit, TextIndex, TextPage, TextSearchOptions } from "./types.ts";
import { documentFields } from "./values.ts";

/** Answers synchronously on success; a failure is a rejected promise, as from any async backend. */
function settle<T>(work: () => T): MaybePromise<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A scope's common-term counts are recounted once writes reach 1/WINDOW_DRIFT of the window counted. */
const WINDOW_DRIFT = 100;
/** Scopes whose common-term counts are kept (all are dropped when more are counted). */
const MAX_COUNTED_SCOPES = 10_000;
/** Phrases whose counts are kept per scope (the common words of a conversation are few). */
const MAX_COUNTED_PHRASES = 256;
/** SQLite's extended result code for a UNIQUE constraint (here: a document id taken in its scope). */
const SQLITE_CONSTRAINT_UNIQUE = 2067;
/** How far past a taken slot one lookup searches for a free one. */
const PROBE = 65_536n;

/**
 * `search_fts` is a contentless FTS5 table (the word index only, never the text; Porter-stemmed,
 * case and diacritics folded); `search_docs` holds each document's id, data and creation time under
 * the same rowid; `search_scopes` numbers each scope and counts its documents (see
 * sqlite-scope-docs.ts); `search_meta` counts the documents, the rows ever inserted into search_fts (at
 * least bm25's N, for the ranker's bound) and the deletions (which invalidate the ranker's cached
 * posting counts). A search is
 * `MATCH terms AND rowid BETWEEN` the scope's range, which FTS5 applies inside its posting lists:
 * an index seek, not a scan.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS search_scopes (
    num INTEGER PRIMARY KEY AUTOINCREMENT,
    idx TEXT NOT NULL,
    scope TEXT NOT NULL,
    docs INTEGER,
    UNIQUE (idx, scope)
  );
  CREATE TABLE IF NOT EXISTS search_docs (
    rowid INTEGER PRIMARY KEY,
    idx TEXT NOT NULL,
    scope TEXT NOT NULL,
    id TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_ms REAL NOT NULL,
    UNIQUE (idx, scope, id)
  );
  CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
  INSERT OR IGNORE INTO search_meta (key, value) VALUES ('docs', (SELECT count(*) FROM search_docs));
  INSERT OR IGNORE INTO search_meta (key, value) VALUES ('deletes', 0);
  CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
    text, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2'
  );
`;

/**
 * The embedded text index, in the SQLite file of the state store (`<dataDir>/agentos.db`), on the
 * state store's connection (see SqliteConnection). Relevance is FTS5's BM25, whose term statistics
 * span the whole table: agentos_bm25 with document counts the ranker keeps (see native/fts5-rank.c),
 * or FTS5's own `-bm25()` where that extension is not built. Writes are group-committed (see SqliteConnection).
 */
export class SqliteTextIndex implements TextIndex {
  readonly kind = "sqlite";
  /** What ranks: agentos_bm25 (native/fts5-rank.c, built by npm install) or, without it, bm25(). */
  get ranking(): "agentos_bm25" | "bm25" {
    return this.ranker.native ? "agentos_bm25" : "bm25";
  }
  private readonly connection: SqliteConnection;
  private readonly db: DatabaseSync;
  private readonly statements: Record<string, StatementSync>;
  private readonly ranker: SqliteRanker;
  /** Per scope (its base rowid): writes made through this index, and the common-term window last counted. */
  private readonly writes = new Map<bigint, number>();
  private readonly windows = new Map<
    bigint,
    { writes: number; size: number; first: bigint | null; found: Map<string, number> }
  >();

  /** Merges the index's segments while the service is idle (the serving process only). */
  readonly merger: IdleMerger | undefined;

  /**
   * `ranking` tunes when the ranker scans and when it ranks every match (tests exercise both);
   * `idleMerge` turns on merging while idle (see sqlite-merge.ts).
   */
  constructor(path: string, ranking: RankerOptions = {}, idleMerge?: IdleMergeOptions) {
    this.connection = openSqliteConnection(path);
    this.db = this.connection.db;
    this.db.exec(SCHEMA);
    keepScopeCounts(this.db);
    const prepare = (sql: string) => {
      const statement = this.db.prepare(sql);
      statement.setReadBigInts(true);
      return statement;
    };
    this.statements = {
      scope: prepare("SELECT num FROM search_scopes WHERE idx = ? AND scope = ?"),
      scopeDocs: prepare("SELECT num, docs FROM search_scopes WHERE idx = ? AND scope = ?"),
      // A new scope is counted from the start (empty); every write keeps its count (sqlite-scope-docs.ts).
      addScope: prepare("INSERT INTO search_scopes (idx, scope, docs) VALUES (?, ?, 0) RETURNING num"),
      countScope: prepare("UPDATE search_scopes SET docs = docs + ? WHERE num = ?"),
      dropScope: prepare("DELETE FROM search_scopes WHERE num = ?"),
      // The lowest scope number not in use (a scan of the scopes: only once none is left above).
      freeScope: prepare(
        `SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM search_scopes WHERE num = 1) THEN 1
           ELSE (SELECT min(num) + 1 FROM search_scopes AS s
                 WHERE NOT EXISTS (SELECT 1 FROM search_scopes AS t WHERE t.num = s.num + 1)) END AS free`,
      ),
      moveScope: prepare("UPDATE search_scopes SET num = ? WHERE num = ?"),
      find: prepare("SELECT rowid FROM search_docs WHERE idx = ? AND scope = ? AND id = ?"),
      exists: prepare("SELECT 1 FROM search_docs WHERE rowid = ?"),
      lastTaken: prepare("SELECT max(rowid) AS top FROM search_docs WHERE rowid BETWEEN ? AND ?"),
      insertDoc: prepare(
        `INSERT INTO search_docs (rowid, idx, scope, id, data, created_at, created_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertText: prepare("INSERT INTO search_fts (rowid, text) VALUES (?, ?)"),
      deleteDoc: prepare("DELETE FROM search_docs WHERE rowid = ?"),
      deleteText: prepare("DELETE FROM search_fts WHERE rowid = ?"),
      deleteScopeDocs: prepare("DELETE FROM search_docs WHERE rowid BETWEEN ? AND ?"),
      deleteScopeText: prepare("DELETE FROM search_fts WHERE rowid BETWEEN ? AND ?"),
      countDocs: prepare("UPDATE search_meta SET value = value + ? WHERE key = 'docs'"),
      // Inserts count documents and rows ever inserted into search_fts (at least FTS5's own count,
      // bm25's N: see SqliteRanker) in one statement.
      countInserts: prepare("UPDATE search_meta SET value = value + ? WHERE key IN ('docs', 'rows')"),
      // Any document gone (deleted or replaced): the ranker's cached posting counts may be too high.
      countDeletes: prepare("UPDATE search_meta SET value = value + 1 WHERE key = 'deletes'"),
      // A scope not counted yet (made since this index opened, by a process of code from before the counts).
      count: prepare("SELECT count(*) AS n FROM search_docs WHERE rowid BETWEEN ? AND ?"),
      // A few ids at a time, each through the (idx, scope, id) index.
      get: prepare(
        `SELECT id, data, created_at FROM search_docs
         WHERE idx = ? AND scope = ? AND id IN (SELECT value FROM json_each(?))`,
      ),
      // A rowid's slot is its creation time within the scope: newest first is rowid order.
      page: prepare(
        `SELECT rowid, id, data, created_at FROM search_docs WHERE rowid BETWEEN ? AND ?
         ORDER BY rowid DESC LIMIT ?`,
      ),
      // The scope's newest entries (the common-term window): its oldest rowid and its size.
      window: prepare(
        `SELECT min(rowid) AS first, count(*) AS n FROM (SELECT rowid FROM search_docs
         WHERE rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?)`,
      ),
      // How many entries of a rowid range hold a phrase, counting no further than the cap.
      found: prepare(
        `SELECT count(*) AS n FROM (SELECT 1 FROM search_fts
         WHERE search_fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT ?)`,
      ),
    };
    // Files from before the `rows` counter start it at FTS5's own count.
    const averages = this.db.prepare("SELECT block FROM search_fts_data WHERE id = 1").get() as
      | { block: Uint8Array }
      | undefined;
    this.db
      .prepare("INSERT OR IGNORE INTO search_meta (key, value) VALUES ('rows', ?)")
      .run(averages ? leadingVarint(averages.block) : 0);
    this.ranker = new SqliteRanker(this.db, ranking);
    this.merger = idleMerge ? new IdleMerger(this.connection, idleMerge) : undefined;
  }

  put(index: string, scope: string, id: string, doc: TextDoc): MaybePromise<void> {
    return this.putMany(index, scope, [{ id, doc }]);
  }

  putMany(index: string, scope: string, docs: Array<{ id: string; doc: TextDoc }>): MaybePromise<void> {
    return this.write(() => {
      const base = this.scopeBase(index, scope) ?? this.addScope(index, scope);
      let added = 0;
      for (const { id, doc } of docs) {
        const { data, createdMs } = documentFields(doc);
        const rowid = this.freeRowid(base, createdMs);
        const row = [rowid, index, scope, id, data, doc.createdAt, createdMs] as const;
        // Ids are new far more often than not: insert, and look for the document to replace only when
        // the id turns out to be taken (one lookup fewer per document).
        if (this.insertNew(row)) added++;
        else {
          const existing = this.statements.find.get(index, scope, id) as { rowid: bigint };
          this.remove(existing.rowid);
          this.statements.insertDoc.run(...row);
        }
        this.statements.insertText.run(rowid, doc.text);
        this.wrote(base);
      }
      this.statements.countInserts.run(docs.length);
      if (added > 0) this.statements.countScope.run(added, base >> SLOT_BITS);
    });
  }

  delete(index: string, scope: string, id: string): MaybePromise<boolean> {
    return this.write(() => {
      const existing = this.statements.find.get(index, scope, id) as { rowid: bigint } | undefined;
      if (!existing) return false;
      this.remove(existing.rowid);
      const base = this.scopeBase(index, scope);
      if (base !== null) {
        this.statements.countScope.run(-1, base >> SLOT_BITS);
        this.wrote(base);
      }
      return true;
    });
  }

  deleteScope(index: string, scope: string): MaybePromise<number> {
    return this.write(() => {
      const base = this.scopeBase(index, scope);
      if (base === null) return 0;
      this.statements.deleteScopeText.run(base, scopeEnd(base));
      const deleted = Number(this.statements.deleteScopeDocs.run(base, scopeEnd(base)).changes);
      this.statements.countDocs.run(-deleted);
      this.statements.countDeletes.run();
      this.statements.dropScope.run(base >> SLOT_BITS);
      this.windows.delete(base);
      this.writes.delete(base);
      return deleted;
    });
  }

  count(index: string, scope: string): MaybePromise<number> {
    return settle(() => {
      const row = this.statements.scopeDocs.get(index, scope) as
        | { num: bigint; docs: bigint | null }
        | undefined;
      if (!row) return 0;
      if (row.docs !== null) return Number(row.docs);
      const base = row.num << SLOT_BITS;
      return countOf(this.statements.count, base, scopeEnd(base));
    });
  }

  get(index: string, scope: string, ids: readonly string[]): MaybePromise<TextPage["items"]> {
    return settle(() => {
      if (ids.length === 0) return [];
      const rows = this.statements.get.all(index, scope, JSON.stringify(ids)) as Array<{
        id: string;
        data: string;
        created_at: string;
      }>;
      return rows.map((row) => ({ id: row.id, data: JSON.parse(row.data), createdAt: row.created_at }));
    });
  }

  list(index: string, scope: string, page: { limit: number; cursor?: string }): MaybePromise<TextPage> {
    return settle(() => {
      const base = this.scopeBase(index, scope);
      if (base === null) return { items: [], nextCursor: null };
      const last = lastOnPage(base, page.cursor);
      const rows = this.statements.page.all(base, last, page.limit + 1) as Array<{
        rowid: bigint;
        id: string;
        data: string;
        created_at: string;
      }>;
      const shown = rows.slice(0, page.limit);
      return {
        items: shown.map((row) => ({ id: row.id, data: JSON.parse(row.data), createdAt: row.created_at })),
        nextCursor: rows.length > page.limit ? String(shown.at(-1)?.rowid) : null,
      };
    });
  }

  search(index: string, scope: string, query: string, options: TextSearchOptions): MaybePromise<TextHit[]> {
    this.merger?.used();
    return settle(() => {
      const terms = queryTerms(query);
      const base = terms.length === 0 ? null : this.scopeBase(index, scope);
      if (base === null) return [];
      // Terms are letters, digits and marks only: quoted, each is a plain string to FTS5.
      const { phrases, docsAtMost } = this.informative(
        terms.map((term) => `"${term}"`),
        base,
      );
      if (phrases.length === 0) return [];
      const request = {
        match: phrases.join(" OR "),
        phrases,
        first: base,
        last: scopeEnd(base),
        slotEpochMs: SLOT_EPOCH_MS,
        limit: options.limit,
        nowMs: nowMs(),
        halfLifeMs: options.recencyHalfLifeMs ?? DEFAULT_RECENCY_HALF_LIFE_MS,
        docsAtMost,
        candidates: options.candidates === true,
      };
      return toHits(this.ranker.rank(request), request.limit, request.nowMs, request.halfLifeMs);
    });
  }

  async close(): Promise<void> {
    this.merger?.close();
    await this.connection.close();
  }

  /**
   * The phrases worth ranking by (see common-terms.ts), counted in the scope's newest entries. The
   * window and each phrase's count are kept per scope until this index has written 1/WINDOW_DRIFT of
   * the window's size to the scope since (a turn stores two memories, and recounting a thousand entries
   * for each would cost more than the ranking it saves); at most MAX_COUNTED_SCOPES scopes are kept.
   * `docsAtMost` bounds the scope's size when the window holds all of it (plus what was written since).
   */
  private informative(phrases: string[], base: bigint): { phrases: string[]; docsAtMost?: number } {
    const last = scopeEnd(base);
    let window = this.windows.get(base);
    const writes = this.writes.get(base) ?? 0;
    if (!window || (writes - window.writes) * WINDOW_DRIFT > window.size) {
      const row = this.statements.window.get(base, last, COMMON_TERM_WINDOW) as {
        first: bigint | null;
        n: bigint;
      };
      window = { writes, size: Number(row.n), first: row.first, found: new Map() };
      if (this.windows.size >= MAX_COUNTED_SCOPES) {
        this.windows.clear();
        this.writes.clear();
        window.writes = 0;
      }
      this.windows.set(base, window);
    }
    const { size, first, found } = window;
    const docsAtMost = size < COMMON_TERM_WINDOW ? size + (writes - window.writes) : undefined;
    if (size < MIN_ENTRIES || first === null) return { phrases, docsAtMost };
    const cap = Math.ceil(size / 2);
    const counts = phrases.map((phrase) => {
      let n = found.get(phrase);
      if (n === undefined) {
        n = countOf(this.statements.found, phrase, first, last, cap);
        if (found.size < MAX_COUNTED_PHRASES) found.set(phrase, n);
      }
      return n;
    });
    return { phrases: informativeTerms(phrases, size, counts), docsAtMost };
  }

  /** A write through the index (group-committed, see SqliteConnection); it also puts off merging. */
  private write<T>(work: () => T): Promise<T> {
    this.merger?.used();
    return this.connection.write(work);
  }

  /** Marks the scope's cached window as one write older. */
  private wrote(base: bigint): void {
    // Only counted scopes need their writes counted (a scope counted later starts from its count then).
    if (!this.windows.has(base)) return;
    this.writes.set(base, (this.writes.get(base) ?? 0) + 1);
  }

  /** Inserts a document row; false when its id is taken in the scope (SQLITE_CONSTRAINT_UNIQUE). */
  private insertNew(row: readonly [bigint, string, string, string, string, string, number]): boolean {
    try {
      this.statements.insertDoc.run(...row);
      return true;
    } catch (error) {
      if ((error as { errcode?: number }).errcode === SQLITE_CONSTRAINT_UNIQUE) return false;
      throw error;
    }
  }

  /** The first rowid of the scope's range, or null when the scope holds nothing. */
  private scopeBase(index: string, scope: string): bigint | null {
    const row = this.statements.scope.get(index, scope) as { num: bigint } | undefined;
    return row ? row.num << SLOT_BITS : null;
  }

  private addScope(index: string, scope: string): bigint {
    const { num } = this.statements.addScope.get(index, scope) as { num: bigint };
    if (num < MAX_SCOPES) return num << SLOT_BITS;
    // Every number was given out once (scopes made and deleted over and over: an agent's memory cleared
    // and refilled): take the lowest one a deleted scope left, whose rowids it took along.
    const { free } = this.statements.freeScope.get() as { free: bigint };
    if (free >= MAX_SCOPES) throw new AppError("unavailable", "Text index: no scope numbers left");
    this.statements.moveScope.run(free, num);
    return free << SLOT_BITS;
  }

  /** The slot of the creation time, or the first free one after it. */
  private freeRowid(base: bigint, createdMs: number): bigint {
    const offset = BigInt(Math.max(0, Math.floor(createdMs - SLOT_EPOCH_MS)));
    let rowid = base + (offset < LAST_SLOT ? offset : LAST_SLOT);
    for (;;) {
      if (rowid >= base + SLOTS) throw new AppError("unavailable", "Text index: no free slot in the scope");
      if (!this.statements.exists.get(rowid)) return rowid;
      // Past the last taken slot of the window: free, unless the window is full (then probe on).
      rowid = (this.statements.lastTaken.get(rowid, rowid + PROBE) as { top: bigint }).top + 1n;
    }
  }

  private remove(rowid: bigint): void {
    this.statements.deleteText.run(rowid);
    this.statements.deleteDoc.run(rowid);
    this.statements.countDocs.run(-1);
    this.statements.countDeletes.run();
  }
}
