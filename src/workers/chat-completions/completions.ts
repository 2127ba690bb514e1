import { call } from "../../engine/call.ts";
import { resolveChoice } from "../../llm/choice.ts";
import type { CostAccount } from "../../llm/cost-event.ts";
import { generate, generateStream } from "../../llm/generate.ts";
import { assertMaySpend, assertProviderOpen } from "../../llm/guards.ts";
import { speaksOpenAi } from "../../llm/openai/client.ts";
import { toOpenAiError } from "../../llm/openai/errors.ts";
import { toOpenAiFinishReason } from "../../llm/openai/finish-reason.ts";
import { fromOpenAiMessages } from "../../llm/openai/messages.ts";
import {
  type CompletionMeta,
  chunkWriter,
  clientToolCalls,
  DONE_EVENT,
  errorEvent,
  newCompletionMeta,
  toChatCompletion,
  toolCallsDelta,
  usageChunk,
} from "../../llm/openai/responses.ts";
import { fromOpenAiToolChoice, fromOpenAiTools } from "../../llm/openai/tools.ts";
import { forwardCompletion, forwardStream } from "../../llm/passthrough.ts";
import type { GenerateResult, ModelChoice, Usage } from "../../llm/types.ts";
import { AppError, describeZodError, isAppError } from "../../shared/errors.ts";
import { type AgentTarget, completeWithAgent, streamAgent } from "./agent-turns.ts";
import { recordCompletionCost } from "./cost.ts";
import type { CompletionDeps } from "./deps.ts";
import { openAiError, type Reply, SSE_HEADERS } from "./reply.ts";
import { type ChatCompletionRequest, chatCompletionRequest, maxTokensOf } from "./schema.ts";

type Target = { kind: "model"; choice: ModelChoice } | AgentTarget;

/** POST /v1/chat/completions: OpenAI's wire format, for a catalog model or for an agent. */
export async function chatCompletion(
  deps: CompletionDeps,
  body: unknown,
  account: CostAccount,
  rawBody?: string,
): Promise<Reply> {
  const parsed = chatCompletionRequest.safeParse(body);
  if (!parsed.success) return openAiError(new AppError("validation", describeZodError(parsed.error)));
  const request = parsed.data;
  try {
    const target = await resolveTarget(deps, request.model);
    // A plain completion is the key's own spending: its realm and budget are asked here, before the
    // stream opens, so a refusal is a real 402/409 (an agent's turn runs the same checks itself).
    if (target.kind === "model") {
      assertProviderOpen(target.choice.provider, account.realmId);
      await assertMaySpend(deps.trigger, account);
    }
    if (target.kind === "model" && speaksOpenAi(target.choice)) {
      return await forward(deps, account, target.choice, request, rawBody);
    }
    if (target.kind === "agent" && request.stream) return await streamAgent(deps, target, request);
    const result = target.kind === "agent" ? completeWithAgent(deps, target, request) : null;
    // Streamed replies consume it later (or never, if the client leaves first): keep its failure handled.
    result?.catch(() => undefined);
    const meta = newCompletionMeta();
    if (request.stream) {
      const includeUsage = request.stream_options?.include_usage === true;
      const events =
        result === null && !request.tools?.length && target.kind === "model"
          ? streamModel(deps, account, target.choice, request, meta, includeUsage)
          : streamResult(
              result ??
                completeWithModel(deps, account, target as Extract<Target, { kind: "model" }>, request),
              meta,
              includeUsage,
            );
      return {
        status_code: 200,
        headers: SSE_HEADERS,
        body: events,
      };
    }
    const done = await (result ??
      completeWithModel(deps, account, target as Extract<Target, { kind: "model" }>, request));
    return { status_code: 200, body: toChatCompletion(meta, done) };
  } catch (error) {
    return openAiError(error);
  }
}

/** A plain model whose provider speaks OpenAI's format: the request and the answer pass through. */
async function forward(
  deps: CompletionDeps,
  account: CostAccount,
  choice: ModelChoice,
  request: ChatCompletionRequest,
  rawBody: string | undefined,
): Promise<Reply> {
  const forwardRequest = {
    choice,
    body: request,
    rawBody,
    env: deps.env,
    trigger: deps.trigger,
    onUsage: (usage: Usage) => recordCompletionCost(deps, account, choice, usage),
  };
  if (request.stream) {
    return {
      status_code: 200,
      headers: SSE_HEADERS,
      body: await forwardStream(forwardRequest),
    };
  }
  return {
    status_code: 200,
    headers: { "content-type": "application/json; charset=utf-8" },
    body: await forwardCompletion(forwardRequest),
  };
}

/** `agent:<id>`, an agent id or name, or else a catalog id or alias. */
async function resolveTarget(deps: CompletionDeps, model: string): Promise<Target> {
  if (model.startsWith("agent:")) return { kind: "agent", agentId: model.slice(6), model };
  try {
    return { kind: "model", choice: await resolveChoice(deps.trigger, model) };
  } catch (error) {
    if (!isAppError(error) || error.status !== 404) throw error;
  }
  // One keyed lookup by id, then by name (an index), never a scan of every agent.
  const agent = await call(deps.trigger, "agent::resolve", { model }).catch((error: unknown) => {
    if (isAppError(error) && error.status === 404) return null;
    throw error;
  });
  if (!agent) {
    throw new AppError(
      "not_found",
      `The model "${model}" does not exist: use a catalog id or alias, or agent:<id>`,
      {
        reason: "model_not_found",
      },
    );
  }
  return { kind: "agent", agentId: agent.agentId, model };
}

function completeWithModel(
  deps: CompletionDeps,
  account: CostAccount,
  target: Extract<Target, { kind: "model" }>,
  request: ChatCompletionRequest,
) {
  const { system, messages } = fromOpenAiMessages(request.messages);
  return generate({
    choices: [target.choice],
    system: system || undefined,
    messages,
    tools: fromOpenAiTools(request.tools),
    toolChoice: fromOpenAiToolChoice(request.tool_choice),
    // The client runs its own tools: one model call, and tool calls go back to it.
    maxSteps: 1,
    temperature: request.temperature ?? undefined,
    maxTokens: maxTokensOf(request),
    env: deps.env,
    trigger: deps.trigger,
    onStepUsage: (choice, usage) => recordCompletionCost(deps, account, choice, usage),
  });
}

async function* streamModel(
  deps: CompletionDeps,
  account: CostAccount,
  choice: ModelChoice,
  request: ChatCompletionRequest,
  meta: CompletionMeta,
  includeUsage: boolean,
): AsyncGenerator<string> {
  const { system, messages } = fromOpenAiMessages(request.messages);
  const chunk = chunkWriter(meta, choice.model.id);
  // A client that goes away ends this generator early: the finally aborts the upstream call with it.
  const upstream = new AbortController();
  yield chunk({ role: "assistant", content: "" }, null);
  try {
    for await (const part of generateStream({
      abortSignal: upstream.signal,
      choices: [choice],
      system: system || undefined,
      messages,
      temperature: request.temperature ?? undefined,
      maxTokens: maxTokensOf(request),
      env: deps.env,
      trigger: deps.trigger,
      onStepUsage: (c, usage) => recordCompletionCost(deps, account, c, usage),
    })) {
      if (part.type === "delta") yield chunk({ content: part.text }, null);
      else {
        yield chunk({}, toOpenAiFinishReason(part.finishReason, false));
        if (includeUsage) yield usageChunk(meta, part.model, part.usage);
      }
    }
  } catch (error) {
    yield errorEvent(toOpenAiError(error).body);
  } finally {
    upstream.abort();
  }
  yield DONE_EVENT;
}

/** A finished result sent as a stream (agents and client tools run to completion first). */
async function* streamResult(
  pending: Promise<GenerateResult>,
  meta: CompletionMeta,
  includeUsage: boolean,
): AsyncGenerator<string> {
  let result: GenerateResult;
  try {
    result = await pending;
  } catch (error) {
    yield errorEvent(toOpenAiError(error).body);
    yield DONE_EVENT;
    return;
  }
  const chunk = chunkWriter(meta, result.model);
  yield chunk({ role: "assistant", content: "" }, null);
  if (result.content) yield chunk({ content: result.content }, null);
  const calls = clientToolCalls(result);
  if (calls) yield chunk(toolCallsDelta(calls), null);
  yield chunk({}, toOpenAiFinishReason(result.finishReason, calls !== undefined));
  if (includeUsage) yield usageChunk(meta, result.model, result.usage);
  yield DONE_EVENT;
}
