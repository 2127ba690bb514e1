import type { TriggerFn } from "../engine/types.ts";
import { closingFirst } from "../shared/closing-first.ts";
import { MAX_EVENT_CHARS, serverSentEvents } from "../shared/sse.ts";
import type { OpenAiChunk } from "./openai/api-types.ts";
import { type OpenAiCall, openOpenAiCall, requestJson } from "./openai/client.ts";
import { toOpenAiError } from "./openai/errors.ts";
import { DONE_EVENT, errorEvent } from "./openai/responses.ts";
import { fromOpenAiUsage } from "./openai/usage.ts";
import { providerError } from "./provider-errors.ts";
import type { ModelChoice, Usage } from "./types.ts";
import { estimatedUsage } from "./usage-estimate.ts";

/**
 * The plain-model path of `/v1/chat/completions` for providers that speak OpenAI's wire format
 * (issue #14): the client's request goes to the provider as it came (the model id swapped for the
 * catalog's), and the answer comes back as the provider gave it, streamed event by event, with the
 * usage read on the way for the ledger. No translation into the AI SDK's terms and back, which cost
 * most of a completion's CPU; the AI SDK stays for agents and for the other wire formats.
 */
export interface ForwardRequest {
  choice: ModelChoice;
  /** The client's request body; `model` is replaced with the catalog's id. */
  body: Record<string, unknown>;
  /** The body exactly as the client sent it: forwarded untouched when nothing needs changing. */
  rawBody?: string;
  env: NodeJS.ProcessEnv;
  trigger: TriggerFn;
  /** Awaited before the answer is complete (the ledger records the cost first). */
  onUsage: (usage: Usage) => Promise<void>;
  timeoutMs?: number;
  /** Retries on 429, 5xx and connection failures before anything was received (Retry-After honoured). */
  maxRetries?: number;
  /** The provider's endpoint under its base URL; `/chat/completions` unless said (`/embeddings`). */
  path?: string;
}

/** Non-streamed: the provider's JSON answer, as text (the caller sends it on unchanged). */
export async function forwardCompletion(request: ForwardRequest): Promise<string> {
  return (await requestJson(upstreamRequest(request, false), request.onUsage)).text;
}

/**
 * Streamed: opened before anything is sent to the client, so a refusal is still a real HTTP status;
 * then the provider's server-sent events one by one. The provider is always asked for usage; its usage
 * event reaches the client only when the client asked for it too.
 */
export async function forwardStream(request: ForwardRequest): Promise<AsyncGenerator<string>> {
  const clientWantsUsage =
    (request.body.stream_options as { include_usage?: unknown } | null | undefined)?.include_usage === true;
  const call = await openOpenAiCall(upstreamRequest(request, true));
  const client = { left: false };
  return closingFirst(relayEvents(request, call, clientWantsUsage, client), () => {
    client.left = true;
    call.done();
  });
}

function upstreamRequest(request: ForwardRequest, stream: boolean) {
  const { choice, env, trigger, path, timeoutMs, maxRetries } = request;
  return {
    choice,
    env,
    trigger,
    path,
    timeoutMs,
    maxRetries,
    stream,
    payload: upstreamBody(request, stream),
  };
}

/** The client's body with the catalog's model id; for a stream, usage is always asked for. */
function upstreamBody(request: ForwardRequest, stream: boolean): string {
  const { body, choice, rawBody } = request;
  if (!stream && rawBody && body.model === choice.model.id) return rawBody;
  const streamOptions = body.stream_options as Record<string, unknown> | null | undefined;
  return JSON.stringify({
    ...body,
    model: choice.model.id,
    ...(stream ? { stream_options: { ...streamOptions, include_usage: true } } : {}),
  });
}

async function* relayEvents(
  request: ForwardRequest,
  call: OpenAiCall,
  clientWantsUsage: boolean,
  client: { left: boolean },
): AsyncGenerator<string> {
  let usage: Usage | undefined;
  let charged = false;
  let failed = false;
  let streamedChars = 0;
  call.response.body.setEncoding("utf8");
  try {
    try {
      for await (const data of serverSentData(call.response.body)) {
        if (data === "[DONE]") break;
        const event = parseChunk(data);
        streamedChars += generatedChars(event);
        if (event?.usage) {
          usage = fromOpenAiUsage(event.usage);
          if (!clientWantsUsage && Array.isArray(event.choices) && event.choices.length === 0) continue;
        }
        yield `data: ${data}\n\n`;
      }
      charged = true;
      await request.onUsage(usage ?? estimatedUsage(request.body.messages, streamedChars));
    } catch (error) {
      failed = true;
      yield errorEvent(toOpenAiError(providerError(request.choice, call.baseUrl, error)).body);
    }
    yield DONE_EVENT;
  } finally {
    // Also when the client leaves mid-stream: the provider's request goes with it.
    call.done();
    // Left before the usage came (the client hung up, or the provider failed after it began to answer):
    // the provider bills what it read and generated all the same, so it is charged as estimated. A
    // provider that sends no usage at all is charged so too (it was free before).
    if (!charged && (client.left || !failed || usage || streamedChars > 0)) {
      void request
        .onUsage(usage ?? estimatedUsage(request.body.messages, streamedChars))
        .catch(() => undefined);
    }
  }
}

/** Characters of answer an event carries: its content and its tool calls' names and arguments. */
function generatedChars(event: OpenAiChunk | undefined): number {
  let chars = 0;
  for (const choice of event?.choices ?? []) {
    chars += choice.delta?.content?.length ?? 0;
    for (const call of choice.delta?.tool_calls ?? [])
      chars += (call.function?.name?.length ?? 0) + (call.function?.arguments?.length ?? 0);
  }
  return chars;
}

function parseChunk(data: string): OpenAiChunk | undefined {
  try {
    return JSON.parse(data) as OpenAiChunk;
  } catch {
    return undefined;
  }
}

/** The `data:` payload of each server-sent event, in order (comments and other fields skipped). */
export async function* serverSentData(
  stream: AsyncIterable<string | Buffer>,
  maxEventChars = MAX_EVENT_CHARS,
): AsyncGenerator<string> {
  for await (const { data } of serverSentEvents(stream, maxEventChars)) yield data;
}
