import type { StatementSync } from "node:sqlite";
import type { SqliteConnection } from "../state/sqlite-connection.ts";
import { countOf } from "./sqlite-counts.ts";

export interface IdleMergeOptions {
  /** No write or search through the index for this long: it rests (ms). */
  idleMs?: number;
  /** Pages one merge step writes at most (each step holds the event loop a few ms). */
  pagesPerStep?: number;
  /** Fewer segments than this are left as they are. */
  minSegments?: number;
  /** A merged index is merged again once rows inserted since reach 1/regrowth of its rows. */
  regrowth?: number;
}

/**
 * Merges the FTS5 index's segments into one while the service is idle. FTS5 appends a segment per
 * transaction and merges them in tiers (automerge), so an index written for months holds a score of
 * segments, and a query seeks every phrase's posting list to the scope's rowid range once in each:
 * at 10 000 agents one segment answers in about two thirds of the time (see bench `memory`, part
 * `agents`). The merge is FTS5's own incremental one (`'merge', -N`: N pages a step, segments of every
 * level together), run a step at a time while the index rests, and paused by any write or search (a
 * step holds the event loop a few ms, which a search in progress should not wait for). It rewrites the
 * whole index, so it runs again only once 1/regrowth of the rows is new since the last one: per row
 * inserted that is at most `regrowth` rows rewritten, on top of what automerge does anyway.
 * `search_meta.merged_rows` keeps the row count of the last merge across restarts.
 */
export class IdleMerger {
  private readonly idleMs: number;
  private readonly pagesPerStep: number;
  private readonly minSegments: number;
  private readonly regrowth: number;
  private readonly statements: Record<string, StatementSync>;
  private lastUseMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private stepping = false;
  private closed = false;

  private readonly connection: SqliteConnection;

  constructor(connection: SqliteConnection, options: IdleMergeOptions = {}) {
    this.connection = connection;
    this.idleMs = options.idleMs ?? 2_000;
    this.pagesPerStep = options.pagesPerStep ?? 64;
    this.minSegments = options.minSegments ?? 4;
    this.regrowth = options.regrowth ?? 8;
    const db = connection.db;
    db.exec("INSERT OR IGNORE INTO search_meta (key, value) VALUES ('merged_rows', 0)");
    this.statements = {
      segments: db.prepare("SELECT count(DISTINCT segid) AS n FROM search_fts_idx"),
      rows: db.prepare("SELECT value AS n FROM search_meta WHERE key = 'rows'"),
      mergedRows: db.prepare("SELECT value AS n FROM search_meta WHERE key = 'merged_rows'"),
      setMergedRows: db.prepare("UPDATE search_meta SET value = ? WHERE key = 'merged_rows'"),
      merge: db.prepare(`INSERT INTO search_fts (search_fts, rank) VALUES ('merge', ?)`),
      changes: db.prepare("SELECT total_changes() AS n"),
    };
    this.arm();
  }

  /** A write or a search went through the index: merging waits until the index rests again. */
  used(): void {
    this.lastUseMs = performance.now();
    this.arm();
  }

  /** Whether the index is worth merging now: enough segments, and enough new rows since the last merge. */
  due(): boolean {
    const rows = this.number("rows");
    const grown = rows - this.number("mergedRows");
    return grown > 0 && grown * this.regrowth >= rows && this.number("segments") >= this.minSegments;
  }

  /** A merge was recorded done and no row was inserted since (for tests). */
  merged(): boolean {
    return this.number("rows") === this.number("mergedRows");
  }

  /** The index's segment count (for tests and benchmarks). */
  segments(): number {
    return this.number("segments");
  }

  /**
   * One merge step; true when FTS5 found nothing left to merge (it changed fewer than two rows), and
   * then the merge is recorded as done.
   */
  step(): Promise<boolean> {
    return this.connection.write(() => {
      const before = this.number("changes");
      this.statements.merge.run(-this.pagesPerStep);
      if (this.number("changes") - before >= 2) return false;
      this.statements.setMergedRows.run(this.number("rows"));
      return true;
    });
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  /** Checks again once the index may be resting (the timer never keeps the process alive). */
  private arm(): void {
    if (this.closed || this.stepping || this.timer) return;
    const wait = Math.max(0, this.lastUseMs + this.idleMs - performance.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, wait);
    this.timer.unref();
  }

  /** Steps while the index rests; a write or search in between hands over to its next rest. */
  private async run(): Promise<void> {
    if (this.closed || !this.idle()) return this.arm();
    this.stepping = true;
    try {
      if (!this.due()) return;
      while (!this.closed && this.idle()) {
        if (await this.step()) return;
        // Requests that arrived during the step go first.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch {
      // Busy (another process writes the file): tried again after the next idle time.
      this.lastUseMs = performance.now();
    } finally {
      this.stepping = false;
    }
    if (!this.closed && !this.idle()) this.arm();
  }

  private idle(): boolean {
    return performance.now() - this.lastUseMs >= this.idleMs;
  }

  private number(statement: string): number {
    return countOf(this.statements[statement]);
  }
}
