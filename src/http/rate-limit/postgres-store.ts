import type { Pool } from "pg";
import { createPool, type DatabaseTimeouts } from "../../engine/state/pg-pool.ts";
import { migrate, namedQuery, prepared, qualifiedTable } from "../../engine/state/postgres.ts";
import { AppError } from "../../shared/errors.ts";
import { type GcraDecision, gcraParameters, remainingAfter } from "./gcra.ts";
import type { RateLimitStore } from "./store.ts";

export interface PostgresRateLimitOptions {
  connectionString: string;
  /** Schema that holds the table, created when missing; without it the connection's search_path decides. */
  schema?: string;
  /** Pool size (default 5): one short statement per limited request needs few connections. */
  max?: number;
  /** Time limits of the pool's connections (default DEFAULT_DATABASE_TIMEOUTS). */
  timeouts?: DatabaseTimeouts;
}

/** A node sweeps expired rows at most this often (lazily, from a decision; no timer keeps the process up). */
const SWEEP_INTERVAL_MS = 60_000;
/**
 * A row is deleted only when its TAT is this far in the past: a TAT in the past carries no information
 * (a fresh client starts at now), and the margin keeps a node whose clock runs ahead from deleting a row
 * that the other nodes still count.
 */
const SWEEP_GRACE_MS = 60_000;

type DecisionRow = { allowed: boolean; tat: number };

function sqlFor(table: string) {
  return {
    // No index besides the key: updates of `tat` then stay HOT, and the sweep's scan is rare and small
    // (one row per client and class seen within the last period).
    create: `CREATE TABLE IF NOT EXISTS ${table} (
      key text COLLATE "C" PRIMARY KEY,
      tat double precision NOT NULL
    )`,
    // $1 key, $2 now, $3 emission interval, $4 burst tolerance (all milliseconds, float8 like JS numbers).
    // The decision is the UPSERT's WHERE, evaluated on the latest committed row under its row lock, so
    // concurrent requests on any node queue on the row and each sees the TAT the previous one wrote.
    // A fresh key is always allowed (tat = now, 0 <= tolerance). When the WHERE refuses, the UPSERT
    // returns nothing and the second branch reads the TAT that explains the denial.
    consume: `WITH allowed AS (
        INSERT INTO ${table} AS r (key, tat) VALUES ($1, $2::float8 + $3::float8)
        ON CONFLICT (key) DO UPDATE SET tat = GREATEST(r.tat, $2::float8) + $3::float8
        WHERE GREATEST(r.tat, $2::float8) - $2::float8 <= $4::float8
        RETURNING tat
      )
      SELECT true AS allowed, tat FROM allowed
      UNION ALL
      SELECT false AS allowed, tat FROM ${table} WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM allowed)`,
    // A denial whose row the statement's snapshot could not explain (the row was written concurrently,
    // after the snapshot): a new statement sees the latest committed TAT.
    read: `SELECT tat FROM ${table} WHERE key = $1`,
    sweep: `DELETE FROM ${table} WHERE tat < $1::float8`,
  };
}

type Statement = keyof ReturnType<typeof sqlFor>;

/**
 * GCRA theoretical arrival times in PostgreSQL (cluster mode): every node decides against the same row
 * per client and class, so the budget is shared. One atomic statement per decision, computed with the
 * same float arithmetic as `gcra()` (the interval and tolerance are computed in JS and passed in, and
 * float8 addition and comparison are the same IEEE operations), so decisions match the in-memory store.
 * Decisions use the caller's clock: keep node clocks synchronised (NTP), since a node whose clock is
 * ahead sees TATs as older and allows a little earlier.
 */
export class PostgresRateLimitStore implements RateLimitStore {
  private readonly pool: Pool;
  private readonly schema: string | undefined;
  private readonly sql: ReturnType<typeof sqlFor>;
  private lastSweep = Number.NEGATIVE_INFINITY;
  private sweeping: Promise<void> | null = null;
  private closed = false;

  /** Prefer `open`, which also creates the table. */
  constructor(options: PostgresRateLimitOptions) {
    this.pool = createPool(options.connectionString, { max: options.max ?? 5, timeouts: options.timeouts });
    this.schema = options.schema;
    this.sql = sqlFor(qualifiedTable(options.schema, "rate_limits"));
  }

  static async open(options: PostgresRateLimitOptions): Promise<PostgresRateLimitStore> {
    const store = new PostgresRateLimitStore(options);
    return prepared(store, () => migrate(store.pool, store.schema, [store.sql.create]));
  }

  async consume(key: string, now: number, limit: number, periodMs: number): Promise<GcraDecision> {
    const { interval, tolerance } = gcraParameters(limit, periodMs);
    let rows: DecisionRow[];
    try {
      rows = await this.query<DecisionRow>("consume", [key, now, interval, tolerance]);
      this.maybeSweep(now);
      if (!rows[0]?.allowed && !explainsDenial(rows[0]?.tat, now, tolerance)) {
        rows = [{ allowed: false, tat: (await this.query<DecisionRow>("read", [key]))[0]?.tat ?? now }];
      }
    } catch (error) {
      throw new AppError("unavailable", "Rate limit store unavailable; retry", { cause: error });
    }
    const { allowed, tat } = rows[0];
    if (allowed) {
      return {
        allowed: true,
        tat,
        limit,
        remaining: remainingAfter(tat, now, interval, tolerance),
        retryAfterMs: 0,
        resetMs: Math.ceil(tat - now),
      };
    }
    const stored = Math.max(tat, now);
    return {
      allowed: false,
      tat: stored,
      limit,
      remaining: 0,
      // At least 1 ms: the statement refused, even if a concurrent request moved the TAT meanwhile.
      retryAfterMs: Math.max(1, Math.ceil(stored - now - tolerance)),
      resetMs: Math.max(1, Math.ceil(stored - now)),
    };
  }

  /** Deletes rows whose TAT lies more than the grace period in the past; returns how many went. */
  async sweep(now: number): Promise<number> {
    const result = await this.pool.query({
      name: "agentos_rate_sweep",
      text: this.sql.sweep,
      values: [now - SWEEP_GRACE_MS],
    });
    return result.rowCount ?? 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.sweeping;
    await this.pool.end();
  }

  /** At most one sweep per interval per node, in the background; a failure waits for the next interval. */
  private maybeSweep(now: number): void {
    if (this.sweeping || this.closed || now - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.lastSweep = now;
    this.sweeping = this.sweep(now)
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.sweeping = null;
      });
  }

  private query<T extends object>(statement: Statement, values: unknown[]): Promise<T[]> {
    return namedQuery<T>(this.pool, `agentos_rate_${statement}`, this.sql[statement], values);
  }
}

/** Whether a TAT read alongside a refusal accounts for it (the GCRA refuses when TAT − now > tolerance). */
function explainsDenial(tat: number | undefined, now: number, tolerance: number): boolean {
  return tat !== undefined && Math.max(tat, now) - now > tolerance;
}
