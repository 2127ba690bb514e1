import { escapeIdentifier, type Pool, type PoolClient, type QueryConfig } from "pg";
import { nowIso } from "../../shared/clock.ts";
import { AppError, conflict } from "../../shared/errors.ts";
import { distinctScopesSql, prefixUpperBound } from "./keys.ts";
import { unavailableWhenUnreachable } from "./pg-errors.ts";
import { createPool, type DatabaseTimeouts } from "./pg-pool.ts";
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
import { applyUpdateOps, type UpdateOp, type UpdateOpError } from "./update-ops.ts";
import { serializeValue, versionConflictMessage } from "./values.ts";

export interface PostgresStateOptions {
  connectionString: string;
  /** Schema that holds the table, created when missing; without it the connection's search_path decides. */
  schema?: string;
  /** Pool size (pg's default: 10). */
  max?: number;
  /** Time limits of the pool's connections (default DEFAULT_DATABASE_TIMEOUTS). */
  timeouts?: DatabaseTimeouts;
}

/** pg returns bigint columns as strings, since they may exceed 2^53. */
type Row = { key: string; value: string; version: string; updated_at: string };
type Stamp = { version: string; updated_at: string };
type NextValue = { value: unknown; text: string };

/**
 * A write normally succeeds on its first attempt; it repeats only when a concurrent transaction
 * inserted the same missing key first. Bounded so that a pathological insert/delete storm fails loudly.
 */
const MAX_WRITE_ATTEMPTS = 20;

/** setTimeout's longest delay: how long pg waits for the answer to a statement without a time limit. */
const UNLIMITED_MS = 2 ** 31 - 1;

/** Serialises concurrent DDL from nodes starting together (CREATE ... IF NOT EXISTS can still race). */
const MIGRATION_LOCK = "agentos.migrations";

/** `"schema"."table"`, or the bare quoted table when no schema is set. */
export function qualifiedTable(schema: string | undefined, table: string): string {
  return schema ? `${escapeIdentifier(schema)}.${escapeIdentifier(table)}` : escapeIdentifier(table);
}

/** Runs a new store's set-up (tables, listeners); if it fails, the store is closed before the error goes on. */
export async function prepared<T extends { close(): Promise<void> }>(
  store: T,
  setUp: () => Promise<void>,
): Promise<T> {
  try {
    await setUp();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/**
 * Runs one of a store's named statements. Named statements are prepared once per connection; each store
 * owns its pool and prefixes its names (`agentos_state_…`), so names cannot clash.
 */
export async function namedQuery<T extends object>(
  runner: Pool | PoolClient,
  name: string,
  text: string,
  values: unknown[],
): Promise<T[]> {
  try {
    const result = await runner.query<T>({ name, text, values });
    return result.rows;
  } catch (error) {
    throw unavailableWhenUnreachable(error);
  }
}

/** Runs DDL once per node start: creates the schema when given, under a cluster-wide advisory lock. */
export async function migrate(pool: Pool, schema: string | undefined, ddl: string[]): Promise<void> {
  await underLock(pool, MIGRATION_LOCK, async (client) => {
    if (schema) await unlimited(client, `CREATE SCHEMA IF NOT EXISTS ${escapeIdentifier(schema)}`);
    // An index built on a large table may take long, and must not fail the start for it.
    for (const statement of ddl) await unlimited(client, statement);
  });
}

/** A statement of a start-up transaction (see `underLock`), which the client waits for as long as it takes. */
function unlimited(client: PoolClient, text: string, values: unknown[] = []) {
  // pg honours a statement's own query_timeout; its types do not list it.
  const statement: QueryConfig & { query_timeout: number } = { text, values, query_timeout: UNLIMITED_MS };
  return client.query(statement);
}

/**
 * `work` in one transaction holding the cluster-wide advisory lock named `lock`, so of the nodes starting
 * together one does it at a time; rolled back when it throws. It is start-up work (migrations, upgrades of
 * stored data) that may take long, and so may the wait for another node's: its statements have no
 * statement timeout.
 */
export async function underLock(
  pool: Pool,
  lock: string,
  work: (client: PoolClient) => Promise<void>,
): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SET LOCAL statement_timeout = 0");
    await unlimited(client, "SELECT pg_advisory_xact_lock(hashtext($1))", [lock]);
    await work(client);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

function toRecord(row: Row): StateRecord {
  return {
    key: row.key,
    value: JSON.parse(row.value),
    version: Number(row.version),
    updatedAt: row.updated_at,
  };
}

const DEADLOCK = "40P01";

/** The distinct keys of a batch in one global order (scope, then key, by code point). */
function lockOrder(ops: BatchOp[]): Array<{ scope: string; key: string }> {
  const unique = new Map(ops.map((op) => [`${op.scope}\u0000${op.key}`, { scope: op.scope, key: op.key }]));
  return [...unique.values()].sort((a, b) => compareKeys(a.scope, b.scope) || compareKeys(a.key, b.key));
}

/** UTF-8 byte order is code point order, the order of the "C" collation (JS `<` compares UTF-16 units). */
function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

function sqlFor(table: string) {
  const columns = "key, value, version, updated_at";
  const list = (lower: ">=" | ">", bounded: boolean) =>
    `SELECT ${columns} FROM ${table} WHERE scope = $1 AND key ${lower} $2` +
    (bounded ? " AND key < $3 ORDER BY key LIMIT $4" : " ORDER BY key LIMIT $3");
  return {
    // `value` is text, not jsonb: the stored JSON is byte-for-byte what serializeValue produced,
    // so both backends return identical values (jsonb would reorder keys and drop duplicates).
    create: `CREATE TABLE IF NOT EXISTS ${table} (
      scope text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      value text NOT NULL,
      version bigint NOT NULL,
      updated_at text NOT NULL,
      PRIMARY KEY (scope, key)
    )`,
    get: `SELECT ${columns} FROM ${table} WHERE scope = $1 AND key = $2`,
    lock: `SELECT ${columns} FROM ${table} WHERE scope = $1 AND key = $2 FOR UPDATE`,
    insert: `INSERT INTO ${table} (scope, key, value, version, updated_at) VALUES ($1, $2, $3, 1, $4)
      ON CONFLICT (scope, key) DO NOTHING RETURNING version, updated_at`,
    update: `UPDATE ${table} SET value = $3, version = version + 1, updated_at = $4
      WHERE scope = $1 AND key = $2 RETURNING version, updated_at`,
    delete: `DELETE FROM ${table} WHERE scope = $1 AND key = $2`,
    scopes: distinctScopesSql(table),
    listFrom: list(">=", false),
    listAfter: list(">", false),
    listFromBelow: list(">=", true),
    listAfterBelow: list(">", true),
  };
}

type Statement = keyof ReturnType<typeof sqlFor>;

/**
 * The cluster backend. Every read-modify-write is one READ COMMITTED transaction that locks the row
 * with SELECT ... FOR UPDATE, so concurrent writers on any node queue on the row instead of losing updates.
 */
export class PostgresStateStore implements StateStore {
  readonly kind = "postgres";
  private readonly pool: Pool;
  private readonly schema: string | undefined;
  private readonly sql: ReturnType<typeof sqlFor>;
  private closed = false;

  /** Prefer `open`, which also creates the table. */
  constructor(options: PostgresStateOptions) {
    this.pool = createPool(options.connectionString, options);
    this.schema = options.schema;
    this.sql = sqlFor(qualifiedTable(options.schema, "state"));
  }

  static async open(options: PostgresStateOptions): Promise<PostgresStateStore> {
    const store = new PostgresStateStore(options);
    return prepared(store, () => migrate(store.pool, store.schema, [store.sql.create]));
  }

  async get(scope: string, key: string): Promise<StateRecord | null> {
    const rows = await this.query<Row>(this.pool, "get", [scope, key]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async set(scope: string, key: string, value: unknown, expectedVersion?: number): Promise<WriteResult> {
    // Serialise before opening a transaction: an invalid value fails without touching the database.
    const text = serializeValue(value);
    return this.write(scope, key, expectedVersion, () => ({ value, text }));
  }

  async delete(scope: string, key: string, expectedVersion?: number): Promise<StateRecord | null> {
    return this.transaction(async (client) => {
      const old = await this.lockCurrent(client, scope, key, expectedVersion);
      if (old) await this.query(client, "delete", [scope, key]);
      return old;
    });
  }

  async listScopes(): Promise<string[]> {
    const rows = await this.query<{ scope: string }>(this.pool, "scopes", []);
    return rows.map((row) => row.scope);
  }

  async list(scope: string, options: ListOptions): Promise<ListPage> {
    const prefix = options.prefix ?? "";
    const upper = prefix ? prefixUpperBound(prefix) : null;
    // Resume after the cursor only when it lies at or past the prefix; an earlier one would widen the range.
    const resume = options.after !== undefined && compareKeys(options.after, prefix) >= 0;
    const from = resume ? (options.after as string) : prefix;
    const fetch = options.limit + 1;
    const rows =
      upper === null
        ? await this.query<Row>(this.pool, resume ? "listAfter" : "listFrom", [scope, from, fetch])
        : await this.query<Row>(this.pool, resume ? "listAfterBelow" : "listFromBelow", [
            scope,
            from,
            upper,
            fetch,
          ]);
    const items = rows.slice(0, options.limit).map(toRecord);
    return { items, lastKey: rows.length > options.limit ? items[items.length - 1].key : null };
  }

  async update(scope: string, key: string, ops: UpdateOp[], expectedVersion?: number): Promise<UpdateResult> {
    let errors: UpdateOpError[] = [];
    const result = await this.write(scope, key, expectedVersion, (old) => {
      const applied = applyUpdateOps(old?.value, ops);
      errors = applied.errors;
      return { value: applied.value, text: serializeValue(applied.value) };
    });
    return { ...result, errors };
  }

  /**
   * Several writes in one transaction. The rows are locked first in key order, so batches touching the
   * same keys queue instead of deadlocking; a deadlock PostgreSQL still reports (rows created meanwhile)
   * reruns the whole batch.
   */
  async batch(ops: BatchOp[]): Promise<BatchOpResult[]> {
    const texts = ops.map((op) => (op.type === "set" ? serializeValue(op.value) : ""));
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.transaction(async (client) => {
          for (const { scope, key } of lockOrder(ops)) await this.query(client, "lock", [scope, key]);
          const results: BatchOpResult[] = [];
          for (const [index, op] of ops.entries())
            results.push(await this.batchOp(client, op, texts[index] ?? ""));
          return results;
        });
      } catch (error) {
        if ((error as { code?: string }).code !== DEADLOCK || attempt >= MAX_WRITE_ATTEMPTS) throw error;
      }
    }
  }

  private async batchOp(client: PoolClient, op: BatchOp, text: string): Promise<BatchOpResult> {
    const { scope, key, expectedVersion } = op;
    if (op.type === "delete") {
      const old = await this.lockCurrent(client, scope, key, expectedVersion);
      if (old) await this.query(client, "delete", [scope, key]);
      return { old, record: null };
    }
    if (op.type === "set")
      return this.writeIn(client, scope, key, expectedVersion, () => ({ value: op.value, text }));
    let errors: UpdateOpError[] = [];
    const result = await this.writeIn(client, scope, key, expectedVersion, (old) => {
      const applied = applyUpdateOps(old?.value, op.ops);
      errors = applied.errors;
      return { value: applied.value, text: serializeValue(applied.value) };
    });
    return { ...result, errors };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  /**
   * Locks the row, checks the expected version, and writes what `next` computes from the old record.
   * A missing row cannot be locked, so two writers may both try to insert it: the loser's
   * INSERT ... DO NOTHING waits for the winner's commit and returns nothing, and the loser then
   * locks the winner's row and recomputes from it (no lost update, and CAS sees the real version).
   */
  private async write(
    scope: string,
    key: string,
    expectedVersion: number | undefined,
    next: (old: StateRecord | null) => NextValue,
  ): Promise<WriteResult> {
    return this.transaction((client) => this.writeIn(client, scope, key, expectedVersion, next));
  }

  /** One locked read-modify-write inside the caller's transaction (see `write`). */
  private async writeIn(
    client: PoolClient,
    scope: string,
    key: string,
    expectedVersion: number | undefined,
    next: (old: StateRecord | null) => NextValue,
  ): Promise<WriteResult> {
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const old = await this.lockCurrent(client, scope, key, expectedVersion);
      const { value, text } = next(old);
      const stamps = await this.query<Stamp>(client, old ? "update" : "insert", [scope, key, text, nowIso()]);
      if (stamps[0]) {
        const record = { key, value, version: Number(stamps[0].version), updatedAt: stamps[0].updated_at };
        return { old, record };
      }
    }
    throw new AppError(
      "unavailable",
      `State key ${scope}/${key} kept changing under concurrent writes; retry`,
    );
  }

  private async lockCurrent(
    client: PoolClient,
    scope: string,
    key: string,
    expectedVersion: number | undefined,
  ): Promise<StateRecord | null> {
    const rows = await this.query<Row>(client, "lock", [scope, key]);
    const found = rows[0] ? Number(rows[0].version) : 0;
    if (expectedVersion !== undefined && expectedVersion !== found) {
      throw conflict(versionConflictMessage(scope, key, expectedVersion, found));
    }
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Named statements are prepared once per connection; the pool belongs to this store, so names cannot clash. */
  private async query<T extends object>(
    runner: Pool | PoolClient,
    statement: Statement,
    values: unknown[],
  ): Promise<T[]> {
    return namedQuery<T>(runner, `agentos_state_${statement}`, this.sql[statement], values);
  }

  /** READ COMMITTED explicitly: the insert-race retry needs each statement to see newly committed rows. */
  private async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect().catch((error: unknown) => {
      throw unavailableWhenUnreachable(error);
    });
    let broken: Error | undefined;
    try {
      await client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      // A failed ROLLBACK means the connection itself is gone: destroy it instead of reusing it.
      await client.query("ROLLBACK").catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw unavailableWhenUnreachable(error);
    } finally {
      client.release(broken);
    }
  }
}
