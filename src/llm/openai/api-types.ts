/**
 * OpenAI's chat completions wire format, as far as this service reads or writes it (the API reference's
 * objects; fields we pass on without reading are left to the index signatures). Providers that speak
 * "OpenAI-compatible" send the same shapes.
 */

export interface OpenAiToolCall {
  id: string;
  type?: "function";
  function: { name: string; arguments: string };
}

/** A content field: text, or parts of which the text ones are read. */
export type OpenAiContent = string | Array<{ type: string; text?: string }> | null | undefined;

/** A message of a request's history, as clients send it (roles OpenAI documents). */
export type OpenAiMessage =
  | { role: "system"; content: OpenAiContent }
  | { role: "developer"; content: OpenAiContent }
  | { role: "user"; content: OpenAiContent }
  | { role: "assistant"; content?: OpenAiContent; tool_calls?: OpenAiToolCall[] }
  | { role: "tool"; tool_call_id: string; content: OpenAiContent };

/** A message as this service sends one to a provider. */
export type OpenAiRequestMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: OpenAiToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export interface OpenAiTool {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export type OpenAiToolChoice =
  | "auto"
  | "none"
  | "required"
  | { type: "function"; function: { name: string } };

export type OpenAiFinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "function_call";

export interface OpenAiUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

/** A non-streamed answer (`chat.completion`). */
export interface OpenAiChatCompletion {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  choices?: Array<{
    index?: number;
    message?: { role?: string; content?: string | null; tool_calls?: OpenAiToolCall[] };
    finish_reason?: string | null;
  }>;
  usage?: OpenAiUsage | null;
}

/** One streamed event (`chat.completion.chunk`); the last one carries only usage when it was asked for. */
export interface OpenAiChunk {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  choices?: Array<{
    index?: number;
    delta?: {
      role?: string;
      content?: string | null;
      tool_calls?: Array<Partial<OpenAiToolCall> & { index: number }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: OpenAiUsage | null;
}

/** What OpenAI answers with a non-2xx status (and what we send a client in its place). */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param?: string | null; code: string | null };
}
