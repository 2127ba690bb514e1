import type { ModelMessage, ToolSet } from "ai";
import { timedCall } from "../model-telemetry.ts";
import type {
  OpenAiChatCompletion,
  OpenAiRequestMessage,
  OpenAiTool,
  OpenAiToolCall,
} from "../openai/api-types.ts";
import { requestJson, speaksOpenAi } from "../openai/client.ts";
import { fromOpenAiFinishReason } from "../openai/finish-reason.ts";
import {
  assistantToolCallMessage,
  isTextPrompt,
  toOpenAiMessages,
  toolResultMessage,
} from "../openai/messages.ts";
import { parseToolArguments, toOpenAiToolChoice, toOpenAiTools } from "../openai/tools.ts";
import { providerError } from "../provider-errors.ts";
import { baseUrlOf } from "../providers.ts";
import {
  DEFAULT_LLM_TIMEOUT_MS,
  type GenerateRequest,
  type GenerateResult,
  type ModelChoice,
  type TurnDriver,
  type Usage,
} from "../types.ts";

/**
 * An agent's turn on an OpenAI-wire provider without the AI SDK (issue #14): the request is written
 * in the provider's own terms and the tool loop runs here, as the AI SDK's generateText would run it
 * (same request fields, same tool messages, same steps, usage and result). The SDK's translation both
 * ways was the largest share of a turn's CPU. Only what is known to be sent the same way takes this
 * path: OpenAI's chat models before the reasoning ones (those get a developer message, no temperature
 * and max_completion_tokens from the SDK) and OpenAI-compatible providers, with a prompt of text, not
 * streamed (a streamed turn is the AI SDK's).
 */
const CLASSIC_OPENAI_MODEL = /^(gpt-4|gpt-3\.5|chatgpt-4o)(?!.*search)/;

export const openAiWireDriver: TurnDriver = {
  takes(choice, request) {
    if (request.onEvent || !speaksOpenAi(choice)) return false;
    if (choice.provider.driver === "openai" && !CLASSIC_OPENAI_MODEL.test(choice.model.id)) return false;
    return isTextPrompt(request.messages);
  },
  run: runTurn,
};

async function runTurn(choice: ModelChoice, request: GenerateRequest): Promise<GenerateResult> {
  const deadline = performance.now() + (request.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS);
  const messages = toOpenAiMessages(request.system, request.messages);
  const tools = request.tools ? toOpenAiTools(request.tools) : undefined;
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
    finishReason = fromOpenAiFinishReason(first?.finish_reason);
    // Without tools of ours there is nothing to run, whatever the model asked for (as the AI SDK does).
    const wanted = request.tools ? (first?.message?.tool_calls ?? []) : [];
    if (wanted.length === 0) break;
    messages.push(assistantToolCallMessage(content, wanted));
    const results = await Promise.all(wanted.map((call) => runTool(request.tools as ToolSet, call, request)));
    for (const [index, call] of wanted.entries()) {
      const ran = results[index] as { input: unknown; output: unknown };
      calls.push({ toolCallId: call.id, toolName: call.function.name, input: ran.input, output: ran.output });
      messages.push(toolResultMessage(call.id, ran.output));
    }
  }
  await Promise.all(recording);
  return { content, model: choice.model.id, usage, finishReason, toolCalls: calls };
}

/** One model call, the remaining time of the turn its deadline, timed as every model call is. */
function callModel(
  choice: ModelChoice,
  request: GenerateRequest,
  call: { messages: OpenAiRequestMessage[]; tools: OpenAiTool[] | undefined; deadline: number },
  onUsage: (usage: Usage) => void,
): Promise<OpenAiChatCompletion> {
  const body = {
    model: choice.model.id,
    messages: call.messages,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
    ...(call.tools ? { tools: call.tools, tool_choice: toOpenAiToolChoice(request.toolChoice) } : {}),
  };
  return timedCall(choice, request.trigger, async () => {
    const { answer } = await requestJson(
      {
        choice,
        payload: JSON.stringify(body),
        stream: false,
        env: request.env,
        trigger: request.trigger,
        timeoutMs: Math.max(1, call.deadline - performance.now()),
        maxRetries: request.maxRetries ?? 2,
        ...(request.abortSignal ? { signal: request.abortSignal } : {}),
      },
      async (usage) => onUsage(usage),
    );
    const problem = unreadable(answer as OpenAiChatCompletion);
    if (problem) throw providerError(choice, baseUrlOf(choice.provider, request.env), new Error(problem));
    return answer as OpenAiChatCompletion;
  });
}

/**
 * What in a provider's answer this loop cannot read, if anything: tool calls that are not a list of
 * calls with an id, a name and their arguments as text, content that is not text, choices that are not
 * a list. The AI SDK checks the same and fails such an answer as the provider's (502); read as it came,
 * it failed the turn with a TypeError (an internal error, 500) or handed on content of another type.
 */
function unreadable(answer: OpenAiChatCompletion): string | undefined {
  const choices: unknown = answer.choices;
  if (choices !== undefined && choices !== null && !Array.isArray(choices))
    return "its choices are not a list";
  const message: unknown = answer.choices?.[0]?.message;
  if (message === undefined || message === null) return undefined;
  const { content, tool_calls: calls } = message as { content?: unknown; tool_calls?: unknown };
  if (content !== undefined && content !== null && typeof content !== "string") {
    return "its content is not text";
  }
  if (calls === undefined || calls === null) return undefined;
  if (!Array.isArray(calls)) return "its tool calls are not a list";
  const readable = (call: { id?: unknown; function?: { name?: unknown; arguments?: unknown } } | null) =>
    typeof call?.id === "string" &&
    typeof call.function?.name === "string" &&
    typeof call.function.arguments === "string";
  return calls.every(readable) ? undefined : "a tool call lacks its id, its name or its arguments as text";
}

/** A tool call run as the AI SDK runs one: its input parsed, an unknown tool or bad input told to the model. */
async function runTool(
  tools: ToolSet,
  call: OpenAiToolCall,
  request: GenerateRequest,
): Promise<{ input: unknown; output: unknown }> {
  const parsed = parseToolArguments(call.function.arguments);
  if ("error" in parsed) return { input: call.function.arguments, output: { error: parsed.error } };
  const { input } = parsed;
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
