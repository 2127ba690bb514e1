import { call } from "../../engine/call.ts";
import { toOpenAiError } from "../../llm/openai/errors.ts";
import { toOpenAiFinishReason } from "../../llm/openai/finish-reason.ts";
import { fromOpenAiMessages } from "../../llm/openai/messages.ts";
import {
  type CompletionMeta,
  chunkWriter,
  DONE_EVENT,
  errorEvent,
  newCompletionMeta,
  toolCallsDelta,
  usageChunk,
} from "../../llm/openai/responses.ts";
import { toOpenAiToolCalls } from "../../llm/openai/tools.ts";
import type { GenerateResult, TurnProgress } from "../../llm/types.ts";
import { openProgress, type ProgressItem } from "../../shared/progress-stream.ts";
import type { CompletionDeps } from "./deps.ts";
import { type Reply, SSE_HEADERS } from "./reply.ts";
import { type ChatCompletionRequest, maxTokensOf } from "./schema.ts";

/** `model` named an agent: its id (from `agent:<id>`, or its id or name resolved). */
export type AgentTarget = { kind: "agent"; agentId: string; model: string };

export /**
 * The agent runs its own tools inside the turn: none of its calls are the client's to run, so the
 * reply never carries tool_calls (a turn that ran out of steps while still calling tools ends as "length":
 * see toOpenAiFinishReason).
 */
async function completeWithAgent(
  deps: CompletionDeps,
  target: AgentTarget,
  request: ChatCompletionRequest,
): Promise<GenerateResult> {
  return { ...(await runAgent(deps, target, request)), toolCalls: [] };
}

export function runAgent(
  deps: CompletionDeps,
  target: AgentTarget,
  request: ChatCompletionRequest,
  progress?: { onProgress: (event: unknown) => void; signal: AbortSignal },
) {
  const { system, messages } = fromOpenAiMessages(request.messages);
  return call(
    deps.trigger,
    "agent::complete",
    {
      agentId: target.agentId,
      messages,
      ...(system ? { system } : {}),
      ...(request.temperature != null ? { temperature: request.temperature } : {}),
      ...(maxTokensOf(request) ? { maxTokens: maxTokensOf(request) } : {}),
      // Kept as a session unless the client says `store: false` (OpenAI's own switch for keeping chats).
      keep: request.store !== false,
    },
    progress,
  );
}

export /**
 * An agent's turn streamed as it happens. The stream opens once the turn has passed its checks (the
 * agent active, its realm open, its budget), so a refusal is a real status in OpenAI's error shape;
 * then text deltas, and the tools the agent calls as OpenAI streams tool calls (the agent runs them
 * itself: the turn still finishes with "stop").
 */
async function streamAgent(
  deps: CompletionDeps,
  target: AgentTarget,
  request: ChatCompletionRequest,
): Promise<Reply> {
  const items = await openProgress((onProgress, signal) =>
    runAgent(deps, target, request, { onProgress, signal }),
  );
  const meta = newCompletionMeta();
  const includeUsage = request.stream_options?.include_usage === true;
  return {
    status_code: 200,
    headers: SSE_HEADERS,
    body: agentChunks(items, meta, includeUsage),
  };
}

async function* agentChunks(
  items: AsyncGenerator<ProgressItem<unknown>>,
  meta: CompletionMeta,
  includeUsage: boolean,
): AsyncGenerator<string> {
  let chunk = chunkWriter(meta, "");
  let calls = 0;
  for await (const item of items) {
    if (item.kind === "error") {
      yield errorEvent(toOpenAiError(item.error).body);
      break;
    }
    if (item.kind === "result") {
      const result = item.result as GenerateResult;
      yield chunk({}, toOpenAiFinishReason(result.finishReason, false));
      if (includeUsage) yield usageChunk(meta, result.model, result.usage);
      break;
    }
    const event = item.event as TurnProgress;
    if (event.type === "start") {
      chunk = chunkWriter(meta, event.model);
      yield chunk({ role: "assistant", content: "" }, null);
    } else if (event.type === "text") yield chunk({ content: event.text }, null);
    else if (event.type === "tool_call") {
      yield chunk(toolCallsDelta(toOpenAiToolCalls([event]), calls++), null);
    }
  }
  yield DONE_EVENT;
}
