import { AppError, isAppError } from "../../shared/errors.ts";
import type { OpenAiErrorBody } from "./api-types.ts";

/** What a provider said in its error body (`error.message`), else the body's text; kept short. */
export function openAiErrorMessage(body: string): string {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === "string") return message.slice(0, 300);
  } catch {
    // Not JSON: the text itself, shortened.
  }
  return body.slice(0, 300);
}

/** Our error in OpenAI's error body, its type told by our status (anything unknown is an internal error). */
export function toOpenAiError(error: unknown): { status: number; body: OpenAiErrorBody } {
  const appError = isAppError(error) ? error : new AppError("internal", "Internal server error");
  const type =
    appError.status === 401
      ? "authentication_error"
      : appError.status === 429
        ? "rate_limit_error"
        : appError.status < 500
          ? "invalid_request_error"
          : "api_error";
  return {
    status: appError.status,
    body: { error: { message: appError.message, type, code: appError.reason ?? appError.code } },
  };
}
