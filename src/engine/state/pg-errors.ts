import { AppError } from "../../shared/errors.ts";

/** Socket errors of a database that is down or unreachable (as node reports them). */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EPIPE",
]);

/**
 * Whether a failure is the database's, not the request's: it could not be reached, dropped the
 * connection, or refused it (SQLSTATE class 08 connection, 53 insufficient resources such as too many
 * connections, 57P shutdown).
 */
function isUnreachable(error: unknown): boolean {
  const code = codeOf(error);
  if (typeof code === "string" && (UNREACHABLE.has(code) || /^(08|53|57P)/.test(code))) return true;
  // pg's own errors for a connection that ended under a query carry no code.
  return error instanceof Error && /^Connection terminated/.test(error.message);
}

const codeOf = (error: unknown) => (error as { code?: unknown } | null)?.code;
const messageOf = (error: unknown) => (error instanceof Error ? error.message : "");

/**
 * Which of the node's time limits (config/env.ts) a failure ran into, if any: the server cancelled a
 * statement (57014) or ended an idle transaction (25P03), a lock wait ran out (55P03, a lock_timeout
 * set in the URL), or pg gave up waiting for a connection or an answer.
 */
function timeoutOf(error: unknown): string | undefined {
  const code = codeOf(error);
  const message = messageOf(error);
  if ((code === "57014" && /statement timeout/.test(message)) || message === "Query read timeout")
    return "statement timeout (AGENTOS_DATABASE_STATEMENT_TIMEOUT_MS)";
  if (code === "55P03") return "lock timeout";
  if (code === "25P03")
    return "idle-in-transaction timeout (AGENTOS_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS)";
  if (
    message === "timeout exceeded when trying to connect" ||
    message === "timeout expired" ||
    /^Connection terminated due to connection timeout/.test(message)
  )
    return "connect timeout (AGENTOS_DATABASE_CONNECT_TIMEOUT_MS)";
  return undefined;
}

/** The 503 a caller may retry for a database failure (naming the time limit it ran into); any other error as it was. */
export function unavailableWhenUnreachable(error: unknown): unknown {
  const timeout = timeoutOf(error);
  if (timeout)
    return new AppError("unavailable", `Database did not answer within its ${timeout}; retry`, {
      cause: error,
    });
  if (!isUnreachable(error)) return error;
  return new AppError("unavailable", "Database unavailable; retry", { cause: error });
}
