import type { ModelMessage } from "ai";
import type { OpenAiMessage } from "./schema.ts";

/** Text of a content field: a string, or the text parts of an array. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "",
    )
    .join("");
}

/**
 * OpenAI messages as AI SDK model messages. System (and developer) messages become the system text;
 * assistant tool calls and tool results keep their ids, and a tool result gets the name of the call it
 * answers (OpenAI sends only the id).
 */
export function toModelMessages(messages: OpenAiMessage[]): { system: string; messages: ModelMessage[] } {
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
        parts.push({
          type: "tool-call",
          toolCallId: call.id,
          toolName: call.function.name,
          input: parseArguments(call.function.arguments),
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

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}
