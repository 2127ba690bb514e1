import type { ModelMessage } from "ai";
import type { OpenAiContent, OpenAiMessage, OpenAiRequestMessage, OpenAiToolCall } from "./api-types.ts";
import { parseToolArguments } from "./tools.ts";

/** Messages between the AI SDK's terms and OpenAI's, both ways. */

/** A text-only prompt: what `toOpenAiMessages` sends exactly as the AI SDK would. */
export function isTextPrompt(messages: readonly ModelMessage[]): boolean {
  return messages.every(
    (message) =>
      (message.role === "user" || message.role === "assistant" || message.role === "system") &&
      typeof message.content === "string",
  );
}

/** A text-only prompt (see isTextPrompt) with its system text first, as a request's `messages`. */
export function toOpenAiMessages(
  system: string | undefined,
  messages: readonly ModelMessage[],
): OpenAiRequestMessage[] {
  return [
    ...(system ? [{ role: "system" as const, content: system }] : []),
    ...messages.map((message) => ({ role: message.role, content: message.content }) as OpenAiRequestMessage),
  ];
}

/** The assistant's turn that asked for tools, as the next request repeats it. */
export function assistantToolCallMessage(content: string, calls: OpenAiToolCall[]): OpenAiRequestMessage {
  return { role: "assistant", content: content || null, tool_calls: calls };
}

/** A tool's result as the message the model reads: text as it is, anything else as JSON. */
export function toolResultMessage(toolCallId: string, output: unknown): OpenAiRequestMessage {
  const content = typeof output === "string" ? output : (JSON.stringify(output) ?? "null");
  return { role: "tool", tool_call_id: toolCallId, content };
}

/** Text of a content field: a string, or the text parts of an array. */
export function textOf(content: OpenAiContent | unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "",
    )
    .join("");
}

/**
 * A client's OpenAI messages as AI SDK model messages. System (and developer) messages become the system
 * text; assistant tool calls and tool results keep their ids, and a tool result gets the name of the call
 * it answers (OpenAI sends only the id). Arguments that are not JSON are read as no arguments.
 */
export function fromOpenAiMessages(messages: readonly OpenAiMessage[]): {
  system: string;
  messages: ModelMessage[];
} {
  const system: string[] = [];
  const out: ModelMessage[] = [];
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    if (message.role === "system" || message.role === "developer") {
      system.push(textOf(message.content));
    } else if (message.role === "user") {
      out.push({ role: "user", content: textOf(message.content) });
    } else if (message.role === "assistant") {
      const parts: Array<Record<string, unknown>> = [];
      const content = textOf(message.content);
      if (content) parts.push({ type: "text", text: content });
      for (const call of message.tool_calls ?? []) {
        toolNames.set(call.id, call.function.name);
        const parsed = parseToolArguments(call.function.arguments);
        parts.push({
          type: "tool-call",
          toolCallId: call.id,
          toolName: call.function.name,
          input: "input" in parsed ? parsed.input : {},
        });
      }
      out.push({ role: "assistant", content: parts } as ModelMessage);
    } else {
      out.push({
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: String(message.tool_call_id),
            toolName: toolNames.get(String(message.tool_call_id)) ?? "tool",
            output: { type: "text", value: textOf(message.content) },
          },
        ],
      } as ModelMessage);
    }
  }
  return { system: system.join("\n\n"), messages: out };
}
