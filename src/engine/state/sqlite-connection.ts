import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { Checkpointer } from "./sqlite-checkpointer.ts";
import { loadExtensions } from "./sqlite-extensions.ts";

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * One connection to the service's SQLite file, shared by every store of the process that opens the
 * same path (the state store and the text index): a second connection would throw away the first
 * one's page cache at each of its writes, and both would pay for the file locks of every statement.
 *
 * Writes are group-committed: the writes of a turn of the event loop run at once, inside one open
 * transaction (each in a savepoint of its own, so a failing write undoes only itself), and are
 * acknowledged when that transaction commits at the end of the turn; only a single statement that is
 * the turn's first write commits by itself at once (an agent's turn, which writes its session, memories
 * and cost in one event-loop turn, so commits once: issue #14). Concurrent requests share one commit
 * instead of paying one each; nothing is acknowledged before it is committed, so a crash loses only
 * writes nobody was told about. Other processes on the file wait for the write lock (busy_timeout) for
 * at most that turn.
 */
export class SqliteConnection {
  readonly db: DatabaseSync;
  private users = 1;
  private waiting: Waiter[] = [];
  private readonly savepoint: StatementSync;
  private readonly release: StatementSync;
  private readonly rollbackTo: StatementSync;
  private readonly checkpoint: StatementSync;
  /** A write was made in this turn of the event loop (its end commits the grouped ones). */
  private turnStarted = false;

  readonly path: string;

  /** WAL checkpoints, on a thread of their own (none for an in-memory database). */
  private readonly checkpointer: Checkpointer | null;

  constructor(path: string) {
    this.path = path;
    this.db = openFile(path);
    this.checkpointer = path === ":memory:" ? null : new Checkpointer(path);
    if (this.checkpointer) this.db.exec("PRAGMA wal_autocheckpoint = 0");
    this.savepoint = this.db.prepare("SAVEPOINT write");
    this.release = this.db.prepare("RELEASE write");
    this.rollbackTo = this.db.prepare("ROLLBACK TO write");
    this.checkpoint = this.db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
  }

  /**
   * Runs `work` (synchronous statements) now and answers its result once it is committed, or its
   * error (its changes undone, the others' kept). A single statement that is the first write of a
   * turn of the event loop commits at once, so a sequential writer never waits; other writes of the
   * turn share one transaction, committed when the turn ends. `oneStatement`: the work changes the file
   * with at most one statement, its last, so a failure has nothing to undo and needs neither
   * transaction nor savepoint.
   */
  write<T>(work: () => T, oneStatement = false): Promise<T> {
    const first = !this.turnStarted;
    if (first) {
      this.turnStarted = true;
      setImmediate(this.endTurn);
    }
    // A lone statement needs no transaction and commits as it runs: a sequential writer never waits.
    // Anything longer joins the turn's group, so a turn that writes several times commits once.
    if (first && oneStatement && !this.db.isTransaction) return this.writeNow(work);
    try {
      if (!this.db.isTransaction) this.db.exec("BEGIN IMMEDIATE");
      if (!oneStatement) this.savepoint.run();
    } catch (error) {
      return Promise.reject(error);
    }
    let result: T;
    try {
      result = work();
      if (!oneStatement) this.release.run();
    } catch (error) {
      if (!oneStatement) {
        this.rollbackTo.run();
        this.release.run();
      }
      return Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ resolve: () => resolve(result), reject });
    });
  }

  /** One statement outside any transaction: SQLite commits it as it runs. */
  private writeNow<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error);
    } finally {
      this.afterCommit();
    }
  }

  private readonly endTurn = () => {
    this.turnStarted = false;
    this.commit();
  };

  /** Commits the open transaction now (before a close, say), answering everything waiting on it. */
  commit(): void {
    const waiting = this.waiting;
    this.waiting = [];
    if (!this.db.isOpen || !this.db.isTransaction) {
      for (const waiter of waiting) waiter.resolve();
      return;
    }
    // Only the grouped writes' transaction is committed here (writeNow commits its own at once).
    try {
      this.db.exec("COMMIT");
    } catch (error) {
      if (this.db.isTransaction) this.db.exec("ROLLBACK");
      for (const waiter of waiting) waiter.reject(error);
      return;
    }
    for (const waiter of waiting) waiter.resolve();
    this.afterCommit();
  }

  /** A long WAL is finished here; otherwise the thread is asked to checkpoint what was just written. */
  private afterCommit(): void {
    if (this.checkpointer?.long) this.finishCheckpoint();
    this.checkpointer?.nudge();
  }

  /** Checkpoints the rest of a long WAL (the thread copied most of it), so the next write starts it over. */
  private finishCheckpoint(): void {
    try {
      const { busy, log, checkpointed } = this.checkpoint.get() as {
        busy: number;
        log: number;
        checkpointed: number;
      };
      if (busy === 0 && checkpointed >= log && this.checkpointer) this.checkpointer.long = false;
    } catch {
      // Busy or failing: the next commit tries again.
    }
  }

  /** One more store uses this connection. */
  share(): this {
    this.users++;
    return this;
  }

  /**
   * The last of its stores to close commits what is pending, stops the checkpointer and closes the file
   * (the last connection to close checkpoints the WAL and removes it).
   */
  async close(): Promise<void> {
    if (--this.users > 0) return;
    open.delete(this.path);
    this.commit();
    await this.checkpointer?.close();
    if (!this.db.isOpen) return;
    this.commit();
    this.db.close();
  }
}

const open = new Map<string, SqliteConnection>();

/** The process's connection to the SQLite file at `path` (":memory:" is a new database each time). */
export function openSqliteConnection(path: string): SqliteConnection {
  const existing = open.get(path);
  if (existing?.db.isOpen) return existing.share();
  const connection = new SqliteConnection(path);
  if (path !== ":memory:") open.set(path, connection);
  return connection;
}

/**
 * Opens (creating when missing) the service's SQLite file in WAL mode, as every connection to it must.
 * A new file and its directory are owner-only: the file holds key hashes and encrypted secrets
 * (SQLite gives -wal/-shm the file's mode).
 */
/*
 * The page cache holds up to 64 MB (SQLite's default is 2 MB): an agent's turn touches state rows, the
 * text index and the ledger, and with the default most reads went to the operating system again
 * (issue #14: about 5 % more agent messages a second at 32 connections, and a lower p99).
 * The first GiB of the file is also read through a memory map: a vector query reads a few hundred
 * random int8 rows of a table larger than that cache (about 155 MB at 100 000 × 1536 dims), and through
 * the map each page costs no system call nor copy, and no eviction of the other stores' cached pages
 * (those 200 reads: p50 1.9 → 1.1 ms). The map is address space: its pages are the operating system's
 * file cache, not the process's heap. Writes still go through the WAL as before.
 */
function openFile(path: string): DatabaseSync {
  const created = path !== ":memory:" && !existsSync(path);
  if (created) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new DatabaseSync(path, { allowExtension: true });
  if (created) chmodSync(path, 0o600);
  loadExtensions(db);
  db.exec(`
    PRAGMA busy_timeout = 5000;
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = NORMAL;
    PRAGMA journal_size_limit = 33554432;
    PRAGMA cache_size = -65536;
    PRAGMA mmap_size = 1073741824;
  `);
  return db;
}
