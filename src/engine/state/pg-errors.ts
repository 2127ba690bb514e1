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
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && (UNREACHABLE.has(code) || /^(08|53|57P)/.test(code))) return true;
  // pg's own errors for a connection that ended under a query carry no code.
  return error instanceof Error && /^Connection terminated/.test(error.message);
}

/** The 503 a caller may retry for a database failure; any other error as it was. */
export function unavailableWhenUnreachable(error: unknown): unknown {
  if (!isUnreachable(error)) return error;
  return new AppError("unavailable", "Database unavailable; retry", { cause: error });
}
