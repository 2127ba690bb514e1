import { toOpenAiError } from "../../llm/openai/errors.ts";

/** What the route answers: a status, headers, and a body (JSON, text, or a stream of events). */
export interface Reply {
  status_code: number;
  headers?: Record<string, string>;
  body: unknown;
}

export { SSE_HEADERS } from "../../shared/sse.ts";

/** A failure as the route's answer: our status, OpenAI's error body {error: {message, type, code}}. */
export function openAiError(error: unknown): Reply {
  const { status, body } = toOpenAiError(error);
  return { status_code: status, body };
}
