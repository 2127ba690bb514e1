import { Pool } from "pg";

/**
 * How a node's PostgreSQL connections are made: their time limits, how many each store holds, and the
 * pool that applies both (state, text and vector indexes, rate limits, pub/sub).
 */

/** Time limits on every connection a node opens (AGENTOS_DATABASE_*_TIMEOUT_MS); 0 turns one off. */
export interface DatabaseTimeouts {
  /** Opening a connection, or waiting for a free one of a full pool. */
  connectMs: number;
  /**
   * One statement, lock waits included: the server cancels it, so a request waiting on a lock another
   * session holds (or on an overloaded server) ends instead of hanging.
   */
  statementMs: number;
  /** A transaction left idle between statements (its node stuck or gone while holding row locks): the server ends the session. */
  idleInTransactionMs: number;
}

/**
 * Rows one statement deletes at most when a whole scope goes (a realm's or an agent's memory, its
 * vectors): a million rows in one statement would pass the statement timeout every time it was retried,
 * and the realm could never be deleted.
 */
export const DELETE_CHUNK_ROWS = 10_000;

export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  connectMs: 30_000,
  statementMs: 30_000,
  idleInTransactionMs: 60_000,
};

/**
 * How much longer than the server's statement timeout the client waits for an answer: a server that hung,
 * or a network that silently dropped the connection, answers nothing, not even the cancellation.
 */
const ANSWER_GRACE_MS = 5_000;

/** The settings pg needs to apply `timeouts` to each connection it opens. */
export function connectionTimeouts(timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS) {
  const { connectMs, statementMs, idleInTransactionMs } = timeouts;
  return {
    connectionTimeoutMillis: connectMs,
    statement_timeout: statementMs,
    idle_in_transaction_session_timeout: idleInTransactionMs,
    // The client's own limit, in case the server cannot say the statement timed out.
    query_timeout: statementMs > 0 ? statementMs + ANSWER_GRACE_MS : undefined,
  };
}

/**
 * How a node's connections are shared out (AGENTOS_DATABASE_POOL_SIZE is the total): the state store does
 * most queries, so it gets what the others leave. One more is the pub/sub listening connection.
 */
export interface PoolSizes {
  state: number;
  search: number;
  vector: number;
  rateLimits: number;
  pubsub: number;
}

/** The smallest total that leaves each pool (and the listening connection) one connection. */
export const MIN_POOL_TOTAL = 6;
export const DEFAULT_POOL_TOTAL = 20;

export function poolSizes(total: number = DEFAULT_POOL_TOTAL): PoolSizes {
  const share = (fraction: number) => Math.max(1, Math.floor(total * fraction));
  const sizes = { search: share(0.15), vector: share(0.15), rateLimits: share(0.1), pubsub: share(0.1) };
  const listener = 1;
  const others = sizes.search + sizes.vector + sizes.rateLimits + sizes.pubsub + listener;
  return { ...sizes, state: Math.max(1, total - others) };
}

/** What a store's pool is opened with, besides the URL. */
export interface PoolOptions {
  max?: number;
  timeouts?: DatabaseTimeouts;
  onError?: (error: Error) => void;
}

/**
 * A connection pool for one of our PostgreSQL users (state, rate limits, pub/sub). An idle connection
 * that breaks (server restart, network) is dropped by the pool and the next query opens a new one;
 * without an 'error' listener that event would crash the process.
 */
export function createPool(connectionString: string, options: PoolOptions = {}): Pool {
  const pool = new Pool({ connectionString, max: options.max, ...connectionTimeouts(options.timeouts) });
  pool.on("error", options.onError ?? (() => undefined));
  return pool;
}
