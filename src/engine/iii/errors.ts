import { AppError, type ErrorCode, isAppError, isErrorCode } from "../../shared/errors.ts";
import { type ErrorBody, isErrorBody } from "./protocol.ts";

/** iii error codes that have a status of our own; every other code a worker sends is a 500. */
const codeOf: Record<string, ErrorCode> = {
  function_not_found: "not_found",
  invocation_stopped: "unavailable",
  deserialization_error: "validation",
  FORBIDDEN: "forbidden",
  TIMEOUT: "timeout",
  NOT_FOUND: "not_found",
  INVALID_ARGUMENTS: "validation",
};

/** The error body sent to a worker: the iii reason when there is one, else our code; never a stack. */
export function toErrorBody(error: unknown): ErrorBody {
  // A worker's own error passes to the calling worker unchanged, stack trace included, as in iii.
  if (isAppError(error) && isErrorBody(error.cause)) return error.cause;
  if (isAppError(error)) return { code: error.reason ?? error.code, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { code: "invocation_error", message };
}

/**
 * A worker's error body as our error, so HTTP callers get a status that fits: our own codes keep
 * theirs (a worker may throw `not_found`), known iii codes map, anything else is a 500 whose message
 * is the worker's. The stack trace stays out of the message (it is logged where the error lands).
 */
export function fromErrorBody(value: unknown, functionId: string): AppError {
  if (!isErrorBody(value)) {
    const message = typeof value === "string" ? value : `Function ${functionId} failed`;
    return new AppError("internal", message, { reason: "UNKNOWN" });
  }
  const code = isErrorCode(value.code) ? value.code : (codeOf[value.code] ?? "internal");
  const body: ErrorBody = { code: value.code, message: value.message };
  if (typeof value.stacktrace === "string") body.stacktrace = value.stacktrace;
  return new AppError(code, value.message, { reason: value.code, cause: body });
}

export function invocationStopped(functionId: string, worker: string): AppError {
  return new AppError(
    "unavailable",
    `Invocation stopped: worker ${worker} disconnected before ${functionId} answered`,
    { reason: "invocation_stopped" },
  );
}
