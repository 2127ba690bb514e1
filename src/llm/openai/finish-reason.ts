import type { FinishReason } from "../types.ts";

/**
 * The one mapping between OpenAI's finish_reason and ours (the AI SDK's words), both ways: the wire
 * driver reads a provider's, and /v1/chat/completions writes one for its clients.
 */

/** A provider's finish_reason in the AI SDK's words, as its OpenAI providers map it. */
export function fromOpenAiFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "stop":
      return "stop";
    case "length":
      return "length";
    case "content_filter":
      return "content-filter";
    case "tool_calls":
    case "function_call":
      return "tool-calls";
    default:
      return "other";
  }
}

/**
 * A turn's finish reason as a client reads it: "tool_calls" when the reply carries calls for the client
 * to run; "length" when the turn was cut short, at max tokens or while still calling tools it runs
 * itself (an agent whose steps ran out: nothing is left for the client to run); "stop" otherwise.
 */
export function toOpenAiFinishReason(
  reason: string,
  clientToolCalls: boolean,
): "stop" | "length" | "tool_calls" {
  if (clientToolCalls) return "tool_calls";
  return reason === "length" || reason === "tool-calls" ? "length" : "stop";
}
