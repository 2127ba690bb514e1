import {
  generateText,
  type LanguageModel,
  type ModelMessage,
  stepCountIs,
  streamText,
  type ToolSet,
  wrapLanguageModel,
} from "ai";
import type { TriggerFn } from "../engine/types.ts";
import { AppError, isAppError } from "../shared/errors.ts";
import { timed, type WrappableModel } from "./model-telemetry.ts";
import { generateOverWire, takesWirePath } from "./openai-wire.ts";
import { providerError } from "./provider-errors.ts";
import { apiKeyOf, baseUrlOf, languageModel, missingKey } from "./providers.ts";
import type { ModelEntry, ProviderEntry, Usage } from "./types.ts";

export interface ModelChoice {
  model: ModelEntry;
  provider: ProviderEntry;
}

export interface GenerateRequest {
  /** The model to use first, then each fallback in order when a call fails. */
  choices: ModelChoice[];
  system?: string;
  messages: ModelMessage[];
  tools?: ToolSet;
  /** auto (default), none, required, or one tool by name. */
  toolChoice?: "auto" | "none" | "required" | { type: "tool"; toolName: string };
  /** Model calls in one request, tool round trips included. */
  maxSteps?: number;
  temperature?: number;
  maxTokens?: number;
  timeoutMs?: number;
  /** Retries per model on 429 and 5xx, honouring Retry-After (AI SDK backoff). */
  maxRetries?: number;
  abortSignal?: AbortSignal;
  env: NodeJS.ProcessEnv;
  trigger: TriggerFn;
  /**
   * After each model call, with its usage (cost accounting). A returned promise (the cost being
   * recorded) is awaited before the turn's result is returned, so an answered turn's cost is stored.
   */
  onStepUsage?: (choice: ModelChoice, usage: Usage) => void | Promise<void>;
  /** Before each model call, tool round trips included; throwing stops the turn (a budget check). */
  beforeStep?: () => Promise<void>;
  /**
   * The turn as it happens: the model is then streamed, and its text deltas, tool calls and tool results
   * come here in order. Once something was told, a failing model is not replaced by a fallback.
   */
  onEvent?: (event: TurnEvent) => void;
}

/** What an agent's streamed turn tells: that it started (its checks passed), then the model's events. */
export type TurnProgress = { type: "start"; model: string; sessionId: string | null } | TurnEvent;

/** What a streamed turn tells as it goes. */
export type TurnEvent =
  | { type: "text"; text: string }
  | { type: "tool_call"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool_result"; toolCallId: string; toolName: string; output: unknown };

export interface GenerateResult {
  content: string;
  model: string;
  usage: Usage;
  finishReason: string;
  /** Every tool call of the turn, in order, with its result (`output`) when it ran. */
  toolCalls: Array<{ toolCallId: string; toolName: string; input: unknown; output?: unknown }>;
}

export const DEFAULT_LLM_TIMEOUT_MS = 120_000;

/** One chat turn (with tool round trips), trying the fallback models in order when a model fails. */
export async function generate(request: GenerateRequest): Promise<GenerateResult> {
  let lastError: unknown;
  const told = { any: false };
  for (const choice of request.choices) {
    try {
      if (request.onEvent) return await streamWith(choice, request, told);
      return takesWirePath(choice, request)
        ? await generateOverWire(choice, request)
        : await generateWith(choice, request);
    } catch (error) {
      lastError = error;
      // A refusal of ours (over budget, invalid input) is not the model's fault: no fallback helps; nor
      // can another model take over an answer the caller has partly seen.
      if (request.abortSignal?.aborted || (isAppError(error) && error.status < 500) || told.any) break;
    }
  }
  throw lastError ?? new AppError("validation", "No model to call");
}

async function generateWith(choice: ModelChoice, request: GenerateRequest): Promise<GenerateResult> {
  const model = await resolveModel(choice, request);
  const recording: Array<void | Promise<void>> = [];
  try {
    const result = await generateText(callSettings(choice, model, request, recording));
    await Promise.all(recording);
    return resultOf(choice, result.text, result.totalUsage, result.finishReason, result.steps);
  } catch (error) {
    throw providerError(choice, baseUrlOf(choice.provider, request.env), error);
  }
}

/** generateWith, streamed: each part is told as it arrives, and the result is the same. */
async function streamWith(
  choice: ModelChoice,
  request: GenerateRequest,
  told: { any: boolean },
): Promise<GenerateResult> {
  const model = await resolveModel(choice, request);
  const recording: Array<void | Promise<void>> = [];
  const tell = (event: TurnEvent) => {
    told.any = true;
    request.onEvent?.(event);
  };
  let failure: unknown;
  try {
    const result = streamText({
      ...callSettings(choice, model, request, recording),
      onError: ({ error }) => {
        failure ??= error;
      },
    });
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") tell({ type: "text", text: part.text });
      else if (part.type === "tool-call") {
        tell({ type: "tool_call", toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
      } else if (part.type === "tool-result") {
        const { toolCallId, toolName, output } = part;
        tell({ type: "tool_result", toolCallId, toolName, output });
      } else if (part.type === "error") failure ??= part.error;
    }
    if (failure) throw failure;
    const [text, usage, finishReason, steps] = await Promise.all([
      result.text,
      result.totalUsage,
      result.finishReason,
      result.steps,
    ]);
    await Promise.all(recording);
    return resultOf(choice, text, usage, finishReason, steps);
  } catch (error) {
    throw providerError(choice, baseUrlOf(choice.provider, request.env), error);
  }
}

type Step = {
  toolCalls: Array<{ toolCallId: string; toolName: string; input: unknown }>;
  toolResults: Array<{ toolCallId: string; output: unknown }>;
};

function resultOf(
  choice: ModelChoice,
  content: string,
  usage: Parameters<typeof usageOf>[0],
  finishReason: unknown,
  steps: readonly Step[],
): GenerateResult {
  return {
    content,
    model: choice.model.id,
    usage: usageOf(usage),
    finishReason: String(finishReason),
    toolCalls: steps.flatMap((step) =>
      step.toolCalls.map((call) => {
        const ran = step.toolResults.find((done) => done.toolCallId === call.toolCallId);
        return {
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input,
          ...(ran ? { output: ran.output } : {}),
        };
      }),
    ),
  };
}

/** The settings both ways of calling share: prompt, tools, limits, retries, timeout, usage hook. */
function callSettings(
  choice: ModelChoice,
  model: LanguageModel,
  request: GenerateRequest,
  recording: Array<void | Promise<void>>,
) {
  return {
    model,
    system: request.system,
    messages: request.messages,
    tools: request.tools,
    toolChoice: request.tools ? request.toolChoice : undefined,
    stopWhen: stepCountIs(request.maxSteps ?? 8),
    temperature: request.temperature,
    maxOutputTokens: request.maxTokens,
    maxRetries: request.maxRetries ?? 2,
    abortSignal: request.abortSignal,
    timeout: { totalMs: request.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS },
    onStepFinish: (step: { usage: Parameters<typeof usageOf>[0] }) => {
      recording.push(request.onStepUsage?.(choice, usageOf(step.usage)));
    },
    // Before every model call after the first (the caller checks before the turn starts).
    prepareStep: async ({ stepNumber }: { stepNumber: number }) => {
      if (stepNumber > 0) await request.beforeStep?.();
      return undefined;
    },
  };
}

/**
 * A streamed turn: text deltas as they come, then the usage. Only the first model is used: once text
 * has reached the caller there is no falling back to another model.
 */
export async function* generateStream(
  request: GenerateRequest,
): AsyncGenerator<
  { type: "delta"; text: string } | { type: "done"; model: string; usage: Usage; finishReason: string }
> {
  const choice = request.choices[0];
  if (!choice) throw new AppError("validation", "No model to call");
  const model = await resolveModel(choice, request);
  let failure: unknown;
  const recording: Array<void | Promise<void>> = [];
  const result = streamText({
    ...callSettings(choice, model, request, recording),
    onError: ({ error }) => {
      failure = error;
    },
  });
  for await (const text of result.textStream) yield { type: "delta", text };
  if (failure) throw providerError(choice, baseUrlOf(choice.provider, request.env), failure);
  const usage = usageOf(await result.totalUsage);
  await Promise.all(recording);
  yield {
    type: "done",
    model: choice.model.id,
    usage,
    finishReason: String(await result.finishReason),
  };
}

async function resolveModel(choice: ModelChoice, request: GenerateRequest): Promise<LanguageModel> {
  const { model, provider } = choice;
  const apiKey = await apiKeyOf(provider, request.env, request.trigger);
  if (!apiKey && !provider.local) throw missingKey(provider);
  const base = languageModel(model, provider, baseUrlOf(provider, request.env), apiKey ?? "not-needed");
  return wrapLanguageModel({ model: base as WrappableModel, middleware: timed(choice, request.trigger) });
}

function usageOf(
  usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number } | undefined,
): Usage {
  const inputTokens = usage?.inputTokens ?? 0;
  const outputTokens = usage?.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage?.totalTokens ?? inputTokens + outputTokens };
}
