import { ZodError } from "zod";
import { describeZodError, isAppError } from "../shared/errors.ts";

export interface ErrorReply {
  status: number;
  body: { error: string; retryAfter?: number };
  /** Unexpected failures are logged with their stack; expected ones are not. */
  unexpected: boolean;
}

/** DESIGN.md §4: AppError codes map to their status; anything unexpected is a 500 without a stack. */
export function toErrorReply(error: unknown): ErrorReply {
  if (isAppError(error)) {
    const body: ErrorReply["body"] = { error: error.message };
    if (error.retryAfter !== undefined) body.retryAfter = error.retryAfter;
    return { status: error.status, body, unexpected: error.status >= 500 && error.status !== 503 };
  }
  if (error instanceof ZodError) {
    return { status: 400, body: { error: describeZodError(error) }, unexpected: false };
  }
  // Only Fastify's own client errors keep their status: a provider SDK's error with statusCode 401 or
  // 429 describes our call upstream, not the client's request, and must not pass through as its own.
  const { statusCode: status, code } = (error ?? {}) as { statusCode?: unknown; code?: unknown };
  if (
    typeof code === "string" &&
    code.startsWith("FST_") &&
    typeof status === "number" &&
    status >= 400 &&
    status < 500
  ) {
    return { status, body: { error: clientErrorMessage(status, error as Error) }, unexpected: false };
  }
  return { status: 500, body: { error: "Internal server error" }, unexpected: true };
}

/** Fastify's own client errors (body too large, bad JSON, bad URL) get plain messages. */
function clientErrorMessage(status: number, error: Error): string {
  if (status === 413) return "Request body is larger than the 1 MiB limit";
  if (status === 415) return "Unsupported Content-Type";
  return error.message.replace(/^FST_\w+:\s*/, "");
}

/**
 * The OpenAI-compatible routes (`/v1/...`) answer every error in OpenAI's shape, the front door's own
 * (missing key, rate limit, busy) included, so the official clients read them.
 */
export function openAiShaped(status: number, body: ErrorReply["body"]): Record<string, unknown> {
  const type =
    status === 401
      ? "authentication_error"
      : status === 429
        ? "rate_limit_error"
        : status < 500
          ? "invalid_request_error"
          : "api_error";
  return { error: { message: body.error, type, code: null } };
}
