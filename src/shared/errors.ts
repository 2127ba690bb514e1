import type { ZodError } from "zod";

/** Every failure the service reports deliberately is an AppError; its code fixes the HTTP status. */
export const errorStatus = {
  validation: 400,
  unauthorized: 401,
  budget_exceeded: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  /** An upstream service (an LLM provider) failed or could not be reached. */
  upstream: 502,
  unavailable: 503,
  timeout: 504,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface AppErrorOptions {
  retryAfter?: number;
  cause?: unknown;
  /**
   * A finer, machine-readable reason than the code, carried over the iii worker protocol as the error
   * body's `code` (e.g. `function_not_found`, `invocation_stopped`, `invocation_failed`).
   */
  reason?: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryAfter?: number;
  readonly reason?: string;

  constructor(code: ErrorCode, message: string, options?: AppErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.status = errorStatus[code];
    if (options?.retryAfter !== undefined) this.retryAfter = options.retryAfter;
    if (options?.reason !== undefined) this.reason = options.reason;
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(errorStatus, value);
}

export const badRequest = (message: string) => new AppError("validation", message);
export const unauthorized = (message = "Missing or invalid API key") => new AppError("unauthorized", message);
export const forbidden = (message: string) => new AppError("forbidden", message);
export const notFound = (message: string) => new AppError("not_found", message);
export const conflict = (message: string) => new AppError("conflict", message);

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** The reason of an error saying the called function is not registered (its worker is not running). */
export const FUNCTION_NOT_FOUND = "function_not_found";

/** True when the call failed because its function is not registered, not because the function refused. */
export const isFunctionNotFound = (error: unknown): boolean =>
  (error as { reason?: unknown } | null)?.reason === FUNCTION_NOT_FOUND;

/** One line per problem, each naming the field path, e.g. `steps.0.name: expected string, received number`. */
export function describeZodError(error: ZodError): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
      return `${path}: ${issue.message}`;
    })
    .join("; ");
}
