import type { Usage } from "./types.ts";

/**
 * A call's usage when the provider never said it (the client left mid-stream, the provider failed after
 * it began to answer, or sends no usage): about four characters a token (OpenAI's own rule of thumb),
 * of what was sent (`sent`, serialised) and of the text received.
 */
export function estimatedUsage(sent: unknown, receivedChars: number): Usage {
  const inputTokens = Math.ceil((JSON.stringify(sent ?? "")?.length ?? 0) / 4);
  const outputTokens = Math.ceil(receivedChars / 4);
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
}
