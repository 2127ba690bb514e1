import { asSchema, jsonSchema, type ToolSet, tool } from "ai";
import type { GenerateRequest, GenerateResult } from "../types.ts";
import type { OpenAiTool, OpenAiToolCall, OpenAiToolChoice } from "./api-types.ts";

/** Tools, tool choice and tool calls between the AI SDK's terms and OpenAI's, both ways. */

/**
 * A tool's parameters as sent, made once per schema: a turn's tool set is wrapped anew for each turn
 * (to follow its abort signal), but its entries keep the schema objects of the agent's kept set.
 */
const parameters = new WeakMap<object, Record<string, unknown>>();

/** Our tools as a request's `tools`, their schemas as the AI SDK sends them to OpenAI. */
export function toOpenAiTools(tools: ToolSet): OpenAiTool[] {
  return Object.entries(tools).map(([name, entry]) => {
    const schema = entry.inputSchema as object;
    let sent = parameters.get(schema);
    if (!sent) {
      sent = openAiSchema(asSchema(entry.inputSchema).jsonSchema as Record<string, unknown>);
      parameters.set(schema, sent);
    }
    return {
      type: "function",
      // A description computed per call (the SDK allows a function) is not sent, as JSON drops functions.
      function: {
        name,
        ...(typeof entry.description === "string" && entry.description
          ? { description: entry.description }
          : {}),
        parameters: sent,
      },
    };
  });
}

/** As the AI SDK sends schemas to OpenAI: without `propertyNames` and regex lookarounds it does not take. */
export function openAiSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "propertyNames") continue;
    if (key === "pattern" && typeof value === "string" && /\(\?<?[=!]/.test(value)) continue;
    copy[key] = nested(value);
  }
  return copy;
}

function nested(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(nested);
  if (value && typeof value === "object") return openAiSchema(value as Record<string, unknown>);
  return value;
}

/** Our tool choice as OpenAI's; none said is "auto", as the AI SDK sends it. */
export function toOpenAiToolChoice(choice: GenerateRequest["toolChoice"]): OpenAiToolChoice {
  if (choice === undefined) return "auto";
  if (typeof choice === "string") return choice;
  return { type: "function", function: { name: choice.toolName } };
}

/** A client's tools as AI SDK tools without `execute`: their calls go back to the client to run. */
export function fromOpenAiTools(tools: readonly OpenAiTool[] | undefined): ToolSet | undefined {
  if (!tools?.length) return undefined;
  const set: ToolSet = {};
  for (const { function: fn } of tools) {
    set[fn.name] = tool({
      description: fn.description,
      inputSchema: jsonSchema(
        (fn.parameters ?? { type: "object", properties: {} }) as Record<string, unknown>,
      ),
    });
  }
  return set;
}

/** A client's tool_choice in our terms; anything unrecognised means the default (auto). */
export function fromOpenAiToolChoice(choice: unknown): GenerateRequest["toolChoice"] {
  if (choice === "none" || choice === "auto" || choice === "required") return choice;
  const name = (choice as { function?: { name?: unknown } } | null)?.function?.name;
  return typeof name === "string" ? { type: "tool", toolName: name } : undefined;
}

/** A tool call's `arguments` (JSON text) as its input; empty text is no arguments. */
export function parseToolArguments(text: string | undefined): { input: unknown } | { error: string } {
  if (!text || text.trim() === "") return { input: {} };
  try {
    return { input: JSON.parse(text) };
  } catch (error) {
    return { error: `The arguments are not JSON: ${(error as Error).message}` };
  }
}

/** Our tool calls as OpenAI's, their input as JSON text. */
export function toOpenAiToolCalls(calls: GenerateResult["toolCalls"]): Required<OpenAiToolCall>[] {
  return calls.map((call) => ({
    id: call.toolCallId,
    type: "function",
    function: { name: call.toolName, arguments: JSON.stringify(call.input ?? {}) },
  }));
}
