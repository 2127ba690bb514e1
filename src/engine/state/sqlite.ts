import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { nowIso } from "../../shared/clock.ts";
import { conflict } from "../../shared/errors.ts";
import { prefixUpperBound } from "./keys.ts";
import type { ListOptions, ListPage, StateRecord, StateStore, UpdateResult, WriteResult } from "./types.ts";
import { applyUpdateOps, type UpdateOp } from "./update-ops.ts";
import { serializeValue, versionConflictMessage } from "./values.ts";

type Row = { key: string; value: string; version: number; updated_at: string };

function toRecord(row: Row): StateRecord {
  return { key: row.key, value: JSON.parse(row.value), version: row.version, updatedAt: row.updated_at };
}

/**
 * The embedded backend: one SQLite file in WAL mode. node:sqlite is synchronous, so each
 * read-modify-write runs inside one IMMEDIATE transaction without yielding to other callers.
 */
export class SqliteStateStore implements StateStore {
  readonly kind = "sqlite";
  private readonly db: DatabaseSync;
  private readonly statements: Record<string, StatementSync>;

  constructor(path: string) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    this.db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
      PRAGMA busy_timeout = 5000;
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
      upsert: this.db.prepare(
        `INSERT INTO state (scope, key, value, version, updated_at) VALUES (?, ?, ?, 1, ?)
         ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, version = state.version + 1,
         updated_at = excluded.updated_at RETURNING ${columns}`,
      ),
      delete: this.db.prepare("DELETE FROM state WHERE scope = ? AND key = ?"),
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
      begin: this.db.prepare("BEGIN IMMEDIATE"),
      commit: this.db.prepare("COMMIT"),
      rollback: this.db.prepare("ROLLBACK"),
    };
  }

  async get(scope: string, key: string): Promise<StateRecord | null> {
    const row = this.statements.get.get(scope, key) as Row | undefined;
    return row ? toRecord(row) : null;
  }

  async set(scope: string, key: string, value: unknown, expectedVersion?: number): Promise<WriteResult> {
    const text = serializeValue(value);
    return this.transaction(() => {
      const old = this.current(scope, key, expectedVersion);
      const row = this.statements.upsert.get(scope, key, text, nowIso()) as Row;
      return { old, record: { ...toRecord(row), value } };
    });
  }

  async delete(scope: string, key: string, expectedVersion?: number): Promise<StateRecord | null> {
    return this.transaction(() => {
      const old = this.current(scope, key, expectedVersion);
      if (old) this.statements.delete.run(scope, key);
      return old;
    });
  }

  async list(scope: string, options: ListOptions): Promise<ListPage> {
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
  }

  async update(scope: string, key: string, ops: UpdateOp[], expectedVersion?: number): Promise<UpdateResult> {
    return this.transaction(() => {
      const old = this.current(scope, key, expectedVersion);
      const { value, errors } = applyUpdateOps(old?.value, ops);
      const row = this.statements.upsert.get(scope, key, serializeValue(value), nowIso()) as Row;
      return { old, record: { ...toRecord(row), value }, errors };
    });
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
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

  private transaction<T>(work: () => T): T {
    this.statements.begin.run();
    try {
      const result = work();
      this.statements.commit.run();
      return result;
    } catch (error) {
      this.statements.rollback.run();
      throw error;
    }
  }
}
