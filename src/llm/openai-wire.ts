import { asSchema, type ModelMessage, type ToolSet } from "ai";
import {
  DEFAULT_LLM_TIMEOUT_MS,
  type GenerateRequest,
  type GenerateResult,
  type ModelChoice,
} from "./generate.ts";
import { timedCall } from "./model-telemetry.ts";
import { completion, speaksOpenAi } from "./passthrough.ts";
import type { Usage } from "./types.ts";

/**
 * An agent's turn on an OpenAI-wire provider without the AI SDK (issue #14): the request is written
 * in the provider's own terms and the tool loop runs here, as the AI SDK's generateText would run it
 * (same request fields, same tool messages, same steps, usage and result). The SDK's translation both
 * ways was the largest share of a turn's CPU. Only what is known to be sent the same way takes this
 * path: OpenAI's chat models before the reasoning ones (those get a developer message, no temperature
 * and max_completion_tokens from the SDK) and OpenAI-compatible providers, with a prompt of text.
 */
const CLASSIC_OPENAI_MODEL = /^(gpt-4|gpt-3\.5|chatgpt-4o)(?!.*search)/;

export function takesWirePath(choice: ModelChoice, request: GenerateRequest): boolean {
  if (!speaksOpenAi(choice)) return false;
  if (choice.provider.driver === "openai" && !CLASSIC_OPENAI_MODEL.test(choice.model.id)) return false;
  return request.messages.every(
    (message) =>
      (message.role === "user" || message.role === "assistant" || message.role === "system") &&
      typeof message.content === "string",
  );
}

type WireToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
type WireMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: WireToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };
type WireAnswer = {
  choices?: Array<{
    message?: { content?: string | null; tool_calls?: WireToolCall[] };
    finish_reason?: string;
  }>;
};

const FINISH_REASONS: Record<string, string> = {
  stop: "stop",
  length: "length",
  content_filter: "content-filter",
  tool_calls: "tool-calls",
  function_call: "tool-calls",
};

export async function generateOverWire(
  choice: ModelChoice,
  request: GenerateRequest,
): Promise<GenerateResult> {
  const deadline = performance.now() + (request.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS);
  const messages: WireMessage[] = [
    ...(request.system ? [{ role: "system" as const, content: request.system }] : []),
    ...request.messages.map((message) => ({ role: message.role, content: message.content }) as WireMessage),
  ];
  const tools = request.tools ? wireTools(request.tools) : undefined;
  const recording: Array<void | Promise<void>> = [];
  const calls: GenerateResult["toolCalls"] = [];
  const usage: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  const maxSteps = request.maxSteps ?? 8;
  let content = "";
  let finishReason = "other";
  for (let step = 0; step < maxSteps; step++) {
    if (step > 0) await request.beforeStep?.();
    const answer = await callModel(choice, request, { messages, tools, deadline }, (stepUsage) => {
      usage.inputTokens += stepUsage.inputTokens;
      usage.outputTokens += stepUsage.outputTokens;
      usage.totalTokens += stepUsage.totalTokens;
      recording.push(request.onStepUsage?.(choice, stepUsage));
    });
    const first = answer.choices?.[0];
    content = first?.message?.content ?? "";
    finishReason = FINISH_REASONS[first?.finish_reason ?? ""] ?? "other";
    const wanted = request.tools ? (first?.message?.tool_calls ?? []) : [];
    if (wanted.length === 0) break;
    messages.push({ role: "assistant", content: content || null, tool_calls: wanted });
    const results = await Promise.all(wanted.map((call) => runTool(request.tools as ToolSet, call, request)));
    for (const [index, call] of wanted.entries()) {
      const ran = results[index] as { input: unknown; output: unknown };
      calls.push({ toolCallId: call.id, toolName: call.function.name, input: ran.input, output: ran.output });
      messages.push({ role: "tool", tool_call_id: call.id, content: toolContent(ran.output) });
    }
  }
  await Promise.all(recording);
  return { content, model: choice.model.id, usage, finishReason, toolCalls: calls };
}

function callModel(
  choice: ModelChoice,
  request: GenerateRequest,
  call: { messages: WireMessage[]; tools: unknown[] | undefined; deadline: number },
  onUsage: (usage: Usage) => void,
): Promise<WireAnswer> {
  const body = {
    model: choice.model.id,
    messages: call.messages,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
    ...(call.tools ? { tools: call.tools, tool_choice: toolChoiceOf(request.toolChoice) } : {}),
  };
  return timedCall(choice, request.trigger, async () => {
    const { answer } = await completion({
      choice,
      body,
      env: request.env,
      trigger: request.trigger,
      onUsage: async (usage) => onUsage(usage),
      timeoutMs: Math.max(1, call.deadline - performance.now()),
      maxRetries: request.maxRetries ?? 2,
      ...(request.abortSignal ? { signal: request.abortSignal } : {}),
    });
    return answer as WireAnswer;
  });
}

function toolChoiceOf(choice: GenerateRequest["toolChoice"]): unknown {
  if (choice === undefined) return "auto";
  if (typeof choice === "string") return choice;
  return { type: "function", function: { name: choice.toolName } };
}

/**
 * A tool's parameters as sent, made once per schema: a turn's tool set is wrapped anew for each turn
 * (to follow its abort signal), but its entries keep the schema objects of the agent's kept set.
 */
const parameters = new WeakMap<object, Record<string, unknown>>();

function wireTools(tools: ToolSet): unknown[] {
  return Object.entries(tools).map(([name, entry]) => {
    const schema = entry.inputSchema as object;
    let sent = parameters.get(schema);
    if (!sent) {
      sent = openAiSchema(asSchema(entry.inputSchema).jsonSchema as Record<string, unknown>);
      parameters.set(schema, sent);
    }
    return {
      type: "function",
      function: { name, ...(entry.description ? { description: entry.description } : {}), parameters: sent },
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

/** A tool call run as the AI SDK runs one: its input parsed, an unknown tool or bad input told to the model. */
async function runTool(
  tools: ToolSet,
  call: WireToolCall,
  request: GenerateRequest,
): Promise<{ input: unknown; output: unknown }> {
  let input: unknown;
  try {
    const text = call.function.arguments ?? "";
    input = text.trim() === "" ? {} : JSON.parse(text);
  } catch (error) {
    return {
      input: call.function.arguments,
      output: { error: `The arguments are not JSON: ${(error as Error).message}` },
    };
  }
  const execute = tools[call.function.name]?.execute;
  if (!execute) return { input, output: { error: `There is no tool named ${call.function.name}` } };
  try {
    const output = await execute(input, {
      toolCallId: call.id,
      messages: [] as ModelMessage[],
      ...(request.abortSignal ? { abortSignal: request.abortSignal } : {}),
    } as Parameters<typeof execute>[1]);
    return { input, output };
  } catch (error) {
    // The turn gave up: no answer is wanted any more.
    if (request.abortSignal?.aborted) throw error;
    return { input, output: { error: (error as Error).message } };
  }
}

/** A tool's result as the message content the model reads: text as it is, anything else as JSON. */
const toolContent = (output: unknown) =>
  typeof output === "string" ? output : (JSON.stringify(output) ?? "null");
