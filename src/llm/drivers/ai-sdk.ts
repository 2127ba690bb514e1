import { generateText, type LanguageModel, stepCountIs, streamText, wrapLanguageModel } from "ai";
import { AppError } from "../../shared/errors.ts";
import { timed, type WrappableModel } from "../model-telemetry.ts";
import { providerError } from "../provider-errors.ts";
import { apiKeyOf, baseUrlOf, languageModel, missingKey } from "../providers.ts";
import {
  DEFAULT_LLM_TIMEOUT_MS,
  type GenerateRequest,
  type GenerateResult,
  type ModelChoice,
  type TurnDriver,
  type TurnEvent,
  type Usage,
} from "../types.ts";
import { estimatedUsage } from "../usage-estimate.ts";

/**
 * A turn through the AI SDK: every provider and prompt it knows, its own tool loop, retries and
 * streaming. Takes any turn; `generate` gives it those the OpenAI-wire driver does not take.
 */
export const aiSdkDriver: TurnDriver = {
  takes: () => true,
  run: (choice, request) => (request.onEvent ? streamTurn(choice, request) : generateTurn(choice, request)),
};

async function generateTurn(choice: ModelChoice, request: GenerateRequest): Promise<GenerateResult> {
  const model = await resolveModel(choice, request);
  const recording: Array<void | Promise<void>> = [];
  const step: StepInFlight = { inFlight: false };
  try {
    const result = await generateText(callSettings(choice, model, request, recording, step));
    await Promise.all(recording);
    return resultOf(choice, result.text, result.totalUsage, result.finishReason, result.steps);
  } catch (error) {
    chargeAbortedStep(choice, request, step, 0);
    throw providerError(choice, baseUrlOf(choice.provider, request.env), error);
  }
}

/** Whether a step's model call is under way (set before it is sent, cleared when its usage came). */
interface StepInFlight {
  inFlight: boolean;
}

/**
 * A turn its caller gave up on (the client went away, its time ran out) while a step was with the
 * provider: that step's usage never comes, yet the provider bills what it read and wrote, so it is
 * charged as estimated (what was sent, and the text that came back of it).
 */
function chargeAbortedStep(
  choice: ModelChoice,
  request: GenerateRequest,
  step: StepInFlight,
  receivedChars: number,
): void {
  if (request.abortSignal?.aborted && step.inFlight) chargeEstimated(choice, request, receivedChars);
}

/** The step under way charged as estimated (its usage will not come): what was sent, and the text back. */
function chargeEstimated(choice: ModelChoice, request: GenerateRequest, receivedChars: number): void {
  const estimate = estimatedUsage([request.system, request.messages], receivedChars);
  void Promise.resolve(request.onStepUsage?.(choice, estimate)).catch(() => undefined);
}

/** generateTurn, streamed: each part is told (`onEvent`) as it arrives, and the result is the same. */
async function streamTurn(choice: ModelChoice, request: GenerateRequest): Promise<GenerateResult> {
  const model = await resolveModel(choice, request);
  const recording: Array<void | Promise<void>> = [];
  const tell = (event: TurnEvent) => request.onEvent?.(event);
  let failure: unknown;
  let charsInStep = 0;
  const step: StepInFlight = { inFlight: false };
  try {
    const result = streamText({
      ...callSettings(choice, model, request, recording, step),
      onError: ({ error }) => {
        failure ??= error;
      },
    });
    for await (const part of result.fullStream) {
      if (part.type === "finish-step") charsInStep = 0;
      else if (part.type === "text-delta") {
        charsInStep += part.text.length;
        tell({ type: "text", text: part.text });
      } else if (part.type === "tool-call") {
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
    chargeAbortedStep(choice, request, step, charsInStep);
    throw providerError(choice, baseUrlOf(choice.provider, request.env), error);
  }
}

/**
 * A streamed turn of text: deltas as they come, then the usage. Only the first model is used: once
 * text has reached the caller there is no falling back to another model.
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
  const step: StepInFlight = { inFlight: false };
  const result = streamText({
    ...callSettings(choice, model, request, recording, step),
    onError: ({ error }) => {
      failure = error;
    },
  });
  let streamedChars = 0;
  let finished = false;
  try {
    for await (const text of result.textStream) {
      streamedChars += text.length;
      yield { type: "delta", text };
    }
    if (failure) throw providerError(choice, baseUrlOf(choice.provider, request.env), failure);
    const usage = usageOf(await result.totalUsage);
    await Promise.all(recording);
    finished = true;
    yield {
      type: "done",
      model: choice.model.id,
      usage,
      finishReason: String(await result.finishReason),
    };
  } finally {
    // Ended before its step was counted (the caller left mid-stream, or the provider failed after it
    // began to answer): the provider bills it all the same, so it is charged as estimated.
    if (!finished && step.inFlight && (streamedChars > 0 || !failure)) {
      chargeEstimated(choice, request, streamedChars);
    }
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

/** The settings every SDK call shares: prompt, tools, limits, retries, timeout, usage hook. */
function callSettings(
  choice: ModelChoice,
  model: LanguageModel,
  request: GenerateRequest,
  recording: Array<void | Promise<void>>,
  step: StepInFlight,
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
    onStepFinish: (finished: { usage: Parameters<typeof usageOf>[0] }) => {
      step.inFlight = false;
      recording.push(request.onStepUsage?.(choice, usageOf(finished.usage)));
    },
    // Before every model call after the first (the caller checks before the turn starts).
    prepareStep: async ({ stepNumber }: { stepNumber: number }) => {
      if (stepNumber > 0) await request.beforeStep?.();
      step.inFlight = true;
      return undefined;
    },
  };
}

async function resolveModel(choice: ModelChoice, request: GenerateRequest): Promise<LanguageModel> {
  const { model, provider } = choice;
  const apiKey = await apiKeyOf(provider, request.env, request.trigger);
  if (!apiKey && !provider.local) throw missingKey(provider);
  const base = languageModel(model, provider, baseUrlOf(provider, request.env), apiKey ?? "not-needed");
  return wrapLanguageModel({ model: base as WrappableModel, middleware: timed(choice, request.trigger) });
}

/** The SDK's usage (its counts may be missing) in our terms. */
function usageOf(
  usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number } | undefined,
): Usage {
  const inputTokens = usage?.inputTokens ?? 0;
  const outputTokens = usage?.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage?.totalTokens ?? inputTokens + outputTokens };
}
