import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * One connection to the service's SQLite file, shared by every store of the process that opens the
 * same path (the state store and the text index): a second connection would throw away the first
 * one's page cache at each of its writes, and both would pay for the file locks of every statement.
 *
 * Writes are group-committed: a write runs at once, inside the connection's open transaction (in a
 * savepoint of its own, so a failing write undoes only itself), and is acknowledged when that
 * transaction commits, once per turn of the event loop. Concurrent requests so share one commit
 * instead of paying one each; nothing is acknowledged before it is committed, so a crash loses only
 * writes nobody was told about. Other processes on the file wait for the write lock (busy_timeout)
 * for at most that turn.
 */
export class SqliteConnection {
  readonly db: DatabaseSync;
  private users = 1;
  private waiting: Waiter[] = [];
  private readonly savepoint: StatementSync;
  private readonly release: StatementSync;
  private readonly rollbackTo: StatementSync;

  readonly path: string;

  constructor(path: string) {
    this.path = path;
    this.db = openFile(path);
    this.savepoint = this.db.prepare("SAVEPOINT write");
    this.release = this.db.prepare("RELEASE write");
    this.rollbackTo = this.db.prepare("ROLLBACK TO write");
  }

  /**
   * Runs `work` (synchronous statements) now, in the shared transaction; answers its result once it
   * is committed, or its error (its changes undone, the others' kept).
   */
  write<T>(work: () => T): Promise<T> {
    try {
      if (!this.db.isTransaction) {
        this.db.exec("BEGIN IMMEDIATE");
        setImmediate(() => this.commit());
      }
      this.savepoint.run();
    } catch (error) {
      return Promise.reject(error);
    }
    let result: T;
    try {
      result = work();
      this.release.run();
    } catch (error) {
      this.rollbackTo.run();
      this.release.run();
      return Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ resolve: () => resolve(result), reject });
    });
  }

  /** Commits the open transaction now (before a close, say), answering everything waiting on it. */
  commit(): void {
    const waiting = this.waiting;
    this.waiting = [];
    if (!this.db.isOpen || !this.db.isTransaction) {
      for (const waiter of waiting) waiter.resolve();
      return;
    }
    try {
      this.db.exec("COMMIT");
    } catch (error) {
      if (this.db.isTransaction) this.db.exec("ROLLBACK");
      for (const waiter of waiting) waiter.reject(error);
      return;
    }
    for (const waiter of waiting) waiter.resolve();
  }

  /** One more store uses this connection. */
  share(): this {
    this.users++;
    return this;
  }

  /** The last of its stores to close commits what is pending and closes the file. */
  close(): void {
    if (--this.users > 0) return;
    open.delete(this.path);
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
function openFile(path: string): DatabaseSync {
  const created = path !== ":memory:" && !existsSync(path);
  if (created) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new DatabaseSync(path);
  if (created) chmodSync(path, 0o600);
  db.exec(`
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = NORMAL;
    PRAGMA busy_timeout = 5000;
  `);
  return db;
}
