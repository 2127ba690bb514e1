import type { DatabaseSync, StatementSync } from "node:sqlite";
import { nowIso } from "../../shared/clock.ts";
import { conflict } from "../../shared/errors.ts";
import type { MaybePromise } from "../../shared/maybe-promise.ts";
import { distinctScopesSql, prefixUpperBound } from "./keys.ts";
import { openSqliteConnection, type SqliteConnection } from "./sqlite-connection.ts";
import type {
  BatchOp,
  BatchOpResult,
  ListOptions,
  ListPage,
  StateRecord,
  StateStore,
  UpdateResult,
  WriteResult,
} from "./types.ts";
import { applyUpdateOps, type UpdateOp } from "./update-ops.ts";
import { serializeValue, versionConflictMessage } from "./values.ts";

/** Answers synchronously on success; a failure is a rejected promise, as from any async backend. */
function settle<T>(work: () => T): MaybePromise<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error);
  }
}

type Row = { key: string; value: string; version: number; updated_at: string };

function toRecord(row: Row): StateRecord {
  return { key: row.key, value: JSON.parse(row.value), version: row.version, updatedAt: row.updated_at };
}

/**
 * The embedded backend: one SQLite file in WAL mode. Every write is a read followed by one statement
 * conditional on the version read, so compare-and-swap holds even against another process on the file.
 */
export class SqliteStateStore implements StateStore {
  readonly kind = "sqlite";
  private readonly connection: SqliteConnection;
  private readonly db: DatabaseSync;
  private readonly statements: Record<string, StatementSync>;

  constructor(path: string) {
    this.connection = openSqliteConnection(path);
    this.db = this.connection.db;
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS state (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        version INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (scope, key)
      ) WITHOUT ROWID;
    `);
    const columns = "key, value, version, updated_at";
    this.statements = {
      get: this.db.prepare(`SELECT ${columns} FROM state WHERE scope = ? AND key = ?`),
      insertIfAbsent: this.db.prepare(
        `INSERT INTO state (scope, key, value, version, updated_at) VALUES (?, ?, ?, 1, ?)
         ON CONFLICT (scope, key) DO NOTHING`,
      ),
      updateIfVersion: this.db.prepare(
        `UPDATE state SET value = ?, version = version + 1, updated_at = ?
         WHERE scope = ? AND key = ? AND version = ?`,
      ),
      deleteIfVersion: this.db.prepare("DELETE FROM state WHERE scope = ? AND key = ? AND version = ?"),
      scopes: this.db.prepare(distinctScopesSql("state")),
      listFromKey: this.db.prepare(
        `SELECT ${columns} FROM state WHERE scope = ? AND key >= ? ORDER BY key LIMIT ?`,
      ),
      listAfterKey: this.db.prepare(
        `SELECT ${columns} FROM state WHERE scope = ? AND key > ? ORDER BY key LIMIT ?`,
      ),
      listFromKeyBelow: this.db.prepare(
        `SELECT ${columns} FROM state WHERE scope = ? AND key >= ? AND key < ? ORDER BY key LIMIT ?`,
      ),
      listAfterKeyBelow: this.db.prepare(
        `SELECT ${columns} FROM state WHERE scope = ? AND key > ? AND key < ? ORDER BY key LIMIT ?`,
      ),
    };
  }

  get(scope: string, key: string): MaybePromise<StateRecord | null> {
    return settle(() => {
      const row = this.statements.get.get(scope, key) as Row | undefined;
      return row ? toRecord(row) : null;
    });
  }

  set(scope: string, key: string, value: unknown, expectedVersion?: number): MaybePromise<WriteResult> {
    return this.connection.write(() => this.setNow(scope, key, value, expectedVersion), true);
  }

  delete(scope: string, key: string, expectedVersion?: number): MaybePromise<StateRecord | null> {
    return this.connection.write(() => this.deleteNow(scope, key, expectedVersion), true);
  }

  /** All or nothing: the ops run in one savepoint of the connection's transaction (see SqliteConnection). */
  batch(ops: BatchOp[]): MaybePromise<BatchOpResult[]> {
    return this.connection.write(() =>
      ops.map((op): BatchOpResult => {
        if (op.type === "delete")
          return { old: this.deleteNow(op.scope, op.key, op.expectedVersion), record: null };
        if (op.type === "update") return this.updateNow(op.scope, op.key, op.ops, op.expectedVersion);
        return this.setNow(op.scope, op.key, op.value, op.expectedVersion);
      }),
    );
  }

  private setNow(scope: string, key: string, value: unknown, expectedVersion?: number): WriteResult {
    const text = serializeValue(value);
    return this.readModifyWrite(scope, key, expectedVersion, () => ({ value, text }));
  }

  private deleteNow(scope: string, key: string, expectedVersion?: number): StateRecord | null {
    for (;;) {
      const old = this.current(scope, key, expectedVersion);
      if (!old) return null;
      if (this.statements.deleteIfVersion.run(scope, key, old.version).changes === 1) return old;
      // Another process wrote in between: with an expected version that is a conflict, else try again.
    }
  }

  private updateNow(scope: string, key: string, ops: UpdateOp[], expectedVersion?: number): UpdateResult {
    let errors: UpdateResult["errors"] = [];
    const result = this.readModifyWrite(scope, key, expectedVersion, (old) => {
      const applied = applyUpdateOps(old?.value, ops);
      errors = applied.errors;
      return { value: applied.value, text: serializeValue(applied.value) };
    });
    return { ...result, errors };
  }

  listScopes(): MaybePromise<string[]> {
    return settle(() => (this.statements.scopes.all() as Array<{ scope: string }>).map((row) => row.scope));
  }

  list(scope: string, options: ListOptions): MaybePromise<ListPage> {
    return settle(() => {
      const prefix = options.prefix ?? "";
      const upper = prefix ? prefixUpperBound(prefix) : null;
      // Compare in code point (UTF-8 byte) order, the order of the keys; JS `>=` compares UTF-16 units.
      const resume =
        options.after !== undefined && Buffer.compare(Buffer.from(options.after), Buffer.from(prefix)) >= 0;
      const from = resume ? (options.after as string) : prefix;
      const fetch = options.limit + 1;
      const rows = (
        upper === null
          ? (resume ? this.statements.listAfterKey : this.statements.listFromKey).all(scope, from, fetch)
          : (resume ? this.statements.listAfterKeyBelow : this.statements.listFromKeyBelow).all(
              scope,
              from,
              upper,
              fetch,
            )
      ) as Row[];
      const items = rows.slice(0, options.limit).map(toRecord);
      return { items, lastKey: rows.length > options.limit ? items[items.length - 1].key : null };
    });
  }

  update(scope: string, key: string, ops: UpdateOp[], expectedVersion?: number): MaybePromise<UpdateResult> {
    return this.connection.write(() => this.updateNow(scope, key, ops, expectedVersion), true);
  }

  async close(): Promise<void> {
    await this.connection.close();
  }

  /** Raw access for benchmarks that compare against plain statements on the same file. */
  get database(): DatabaseSync {
    return this.db;
  }

  private current(scope: string, key: string, expectedVersion: number | undefined): StateRecord | null {
    const row = this.statements.get.get(scope, key) as Row | undefined;
    const found = row ? row.version : 0;
    if (expectedVersion !== undefined && expectedVersion !== found) {
      throw conflict(versionConflictMessage(scope, key, expectedVersion, found));
    }
    return row ? toRecord(row) : null;
  }

  /**
   * Reads the record, computes the new value and writes it only if the version is still the one read
   * (one conditional statement, atomic without a transaction). A miss means another process wrote in
   * between: a conflict when the caller named a version, otherwise read and compute again.
   */
  private readModifyWrite(
    scope: string,
    key: string,
    expectedVersion: number | undefined,
    compute: (old: StateRecord | null) => { value: unknown; text: string },
  ): WriteResult {
    for (;;) {
      // Create-only: the insert itself tells whether the key was free, without reading it first.
      if (expectedVersion === 0) {
        const next = compute(null);
        const updatedAt = nowIso();
        if (this.statements.insertIfAbsent.run(scope, key, next.text, updatedAt).changes === 1) {
          return { old: null, record: { key, value: next.value, version: 1, updatedAt } };
        }
        this.current(scope, key, expectedVersion); // throws the conflict, naming the version found
        continue; // deleted in between by another process: try again
      }
      const old = this.current(scope, key, expectedVersion);
      const next = compute(old);
      const updatedAt = nowIso();
      const { changes } = old
        ? this.statements.updateIfVersion.run(next.text, updatedAt, scope, key, old.version)
        : this.statements.insertIfAbsent.run(scope, key, next.text, updatedAt);
      if (changes === 1) {
        return { old, record: { key, value: next.value, version: (old?.version ?? 0) + 1, updatedAt } };
      }
    }
  }
}
