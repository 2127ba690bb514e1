import type { Usage } from "../../llm/types.ts";
import { nowMs } from "../../shared/clock.ts";
import { AppError, isAppError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import type { ChatCompletionRequest } from "./schema.ts";

/** What the route answers: a status, headers, and a body (JSON, text, or a stream of events). */
export interface Reply {
  status_code: number;
  headers?: Record<string, string>;
  body: unknown;
}

export type Meta = { id: string; created: number };

export { SSE_HEADERS } from "../../shared/sse.ts";

/** A new answer's id and creation time, as OpenAI gives them. */
export const newMeta = (): Meta => ({
  id: `chatcmpl-${newId().replace(/-/g, "")}`,
  created: Math.floor(nowMs() / 1000),
});

export function chunker(meta: Meta, model: string) {
  return (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ ...meta, object: "chat.completion.chunk", model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

export function usageChunk(meta: Meta, model: string, usage: Usage): string {
  return `data: ${JSON.stringify({ ...meta, object: "chat.completion.chunk", model, choices: [], usage: openAiUsage(usage) })}\n\n`;
}

export const maxTokensOf = (request: ChatCompletionRequest) =>
  request.max_completion_tokens ?? request.max_tokens ?? undefined;

export const openAiUsage = (usage: Usage) => ({
  prompt_tokens: usage.inputTokens,
  completion_tokens: usage.outputTokens,
  total_tokens: usage.totalTokens,
});

/** OpenAI's error shape {error: {message, type, code}} with our status. */
export function openAiError(error: unknown): Reply {
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
    status_code: appError.status,
    body: { error: { message: appError.message, type, code: appError.reason ?? appError.code } },
  };
}
