import { nowMs } from "../../shared/clock.ts";
import { newId } from "../../shared/ids.ts";
import type { GenerateResult, Usage } from "../types.ts";
import type { OpenAiChatCompletion, OpenAiErrorBody, OpenAiToolCall } from "./api-types.ts";
import { toOpenAiFinishReason } from "./finish-reason.ts";
import { toOpenAiToolCalls } from "./tools.ts";
import { toOpenAiUsage } from "./usage.ts";

/**
 * Our turn's result in OpenAI's answer shapes, for clients of /v1/chat/completions: the
 * `chat.completion` body, and the `chat.completion.chunk` server-sent events of a stream.
 */

/** What every chunk of one answer shares: its id and creation time (seconds). */
export type CompletionMeta = { id: string; created: number };

/** A new answer's id and creation time, as OpenAI gives them. */
export const newCompletionMeta = (): CompletionMeta => ({
  id: `chatcmpl-${newId().replace(/-/g, "")}`,
  created: Math.floor(nowMs() / 1000),
});

/** The tool calls a reply hands to the client to run: a turn that stopped for tools it does not run. */
export function clientToolCalls(result: GenerateResult): Required<OpenAiToolCall>[] | undefined {
  if (result.finishReason !== "tool-calls" || result.toolCalls.length === 0) return undefined;
  return toOpenAiToolCalls(result.toolCalls);
}

/** A finished turn as a `chat.completion` body; with tool calls and no text, content is null. */
export function toChatCompletion(meta: CompletionMeta, result: GenerateResult): OpenAiChatCompletion {
  const calls = clientToolCalls(result);
  return {
    ...meta,
    object: "chat.completion",
    model: result.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: calls && !result.content ? null : result.content,
          ...(calls ? { tool_calls: calls } : {}),
        },
        finish_reason: toOpenAiFinishReason(result.finishReason, calls !== undefined),
      },
    ],
    usage: toOpenAiUsage(result.usage),
  };
}

/** Builds one answer's `chat.completion.chunk` events (delta and finish reason) for `model`. */
export function chunkWriter(meta: CompletionMeta, model: string) {
  return (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ ...meta, object: "chat.completion.chunk", model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

/** A chunk's delta handing over tool calls, numbered from `first` (later calls of a stream go on from there). */
export function toolCallsDelta(calls: OpenAiToolCall[], first = 0): { tool_calls: unknown[] } {
  return { tool_calls: calls.map((call, offset) => ({ index: first + offset, ...call })) };
}

/** The usage event that ends a stream whose client asked for it (`stream_options.include_usage`). */
export function usageChunk(meta: CompletionMeta, model: string, usage: Usage): string {
  return `data: ${JSON.stringify({ ...meta, object: "chat.completion.chunk", model, choices: [], usage: toOpenAiUsage(usage) })}\n\n`;
}

/** A failure told inside a stream that has already begun, as OpenAI does: an error event. */
export const errorEvent = (body: OpenAiErrorBody) => `data: ${JSON.stringify(body)}\n\n`;

/** The event that ends every stream. */
export const DONE_EVENT = "data: [DONE]\n\n";
