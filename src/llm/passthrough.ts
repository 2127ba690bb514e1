import type { Readable } from "node:stream";
import type { TriggerFn } from "../engine/types.ts";
import { AppError } from "../shared/errors.ts";
import { serverSentEvents } from "../shared/sse.ts";
import { DEFAULT_LLM_TIMEOUT_MS, type ModelChoice } from "./generate.ts";
import { post, type UpstreamResponse } from "./http-client.ts";
import { providerError, UpstreamStatusError } from "./provider-errors.ts";
import { apiKeyOf, baseUrlOf, missingKey } from "./providers.ts";
import type { Usage } from "./types.ts";

/**
 * The plain-model path of `/v1/chat/completions` for providers that speak OpenAI's wire format
 * (issue #14): the client's request goes to the provider as it came (the model id swapped for the
 * catalog's), and the answer comes back as the provider gave it, streamed event by event, with the
 * usage read on the way for the ledger. No translation into the AI SDK's terms and back, which cost
 * most of a completion's CPU; the AI SDK stays for agents and for the other wire formats.
 */
export function speaksOpenAi(choice: ModelChoice): boolean {
  return choice.provider.driver === "openai" || choice.provider.driver === "openai_compat";
}

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
  /** The caller giving up (an agent's turn aborted): the provider's request goes too. */
  signal?: AbortSignal;
}

/** Non-streamed: the provider's JSON answer, as text (the caller sends it on unchanged). */
export async function forwardCompletion(request: ForwardRequest): Promise<string> {
  return (await completion(request)).text;
}

/** Non-streamed, for a caller that reads the answer: its text and its parsed JSON. */
export async function completion(request: ForwardRequest): Promise<{ text: string; answer: OpenAiAnswer }> {
  const call = await openUpstream(request, false);
  try {
    const text = await readAll(call.response.body);
    let answer: OpenAiAnswer;
    try {
      answer = JSON.parse(text) as OpenAiAnswer;
    } catch (error) {
      throw new Error(`the answer is not JSON (${(error as Error).message})`);
    }
    await request.onUsage(usageOf(answer.usage));
    return { text, answer };
  } catch (error) {
    throw providerError(
      request.choice,
      call.baseUrl,
      request.signal?.aborted ? request.signal.reason : error,
    );
  } finally {
    call.done();
  }
}

/**
 * Streamed: opened before anything is sent to the client, so a refusal is still a real HTTP status;
 * then the provider's server-sent events one by one. The provider is always asked for usage; its usage
 * event reaches the client only when the client asked for it too.
 */
export async function forwardStream(request: ForwardRequest): Promise<AsyncGenerator<string>> {
  const clientWantsUsage =
    (request.body.stream_options as { include_usage?: unknown } | null | undefined)?.include_usage === true;
  const call = await openUpstream(request, true);
  return relayEvents(request, call, clientWantsUsage);
}

async function* relayEvents(
  request: ForwardRequest,
  call: UpstreamCall,
  clientWantsUsage: boolean,
): AsyncGenerator<string> {
  let usage: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  call.response.body.setEncoding("utf8");
  try {
    try {
      for await (const data of serverSentData(call.response.body)) {
        if (data === "[DONE]") break;
        const event = parseEvent(data);
        if (event?.usage) {
          usage = usageOf(event.usage);
          if (!clientWantsUsage && Array.isArray(event.choices) && event.choices.length === 0) continue;
        }
        yield `data: ${data}\n\n`;
      }
      await request.onUsage(usage);
    } catch (error) {
      const failure = providerError(request.choice, call.baseUrl, error);
      yield `data: ${JSON.stringify({ error: { message: failure.message, type: "api_error", code: failure.code } })}\n\n`;
    }
    yield "data: [DONE]\n\n";
  } finally {
    // Also when the client leaves mid-stream: the provider's request goes with it.
    call.done();
  }
}

type OpenAiUsage = { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
type OpenAiAnswer = Record<string, unknown> & { usage?: OpenAiUsage };

function usageOf(usage: OpenAiUsage | undefined): Usage {
  const inputTokens = usage?.prompt_tokens ?? 0;
  const outputTokens = usage?.completion_tokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage?.total_tokens ?? inputTokens + outputTokens };
}

function parseEvent(data: string): { usage?: OpenAiUsage; choices?: unknown } | undefined {
  try {
    return JSON.parse(data) as { usage?: OpenAiUsage; choices?: unknown };
  } catch {
    return undefined;
  }
}

/** The `data:` payload of each server-sent event, in order (comments and other fields skipped). */
export async function* serverSentData(stream: AsyncIterable<string | Buffer>): AsyncGenerator<string> {
  for await (const { data } of serverSentEvents(stream)) yield data;
}

interface UpstreamCall {
  response: UpstreamResponse;
  baseUrl: string;
  /** Ends the call: stops the timer and, when the answer was not read to its end, aborts it. */
  done(): void;
}

/** The provider's 2xx answer (headers received), after the retries the failures before it allow. */
async function openUpstream(request: ForwardRequest, stream: boolean): Promise<UpstreamCall> {
  const { choice, env, trigger } = request;
  const baseUrl = baseUrlOf(choice.provider, env);
  const apiKey = await apiKeyOf(choice.provider, env, trigger);
  if (!apiKey && !choice.provider.local) throw missingKey(choice.provider);
  let url: URL;
  try {
    url = new URL(`${baseUrl.replace(/\/+$/, "")}${request.path ?? "/chat/completions"}`);
  } catch {
    throw new AppError("unavailable", `Provider ${choice.provider.id} has an invalid base URL`);
  }
  const payload = upstreamBody(request, stream);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: stream ? "text/event-stream" : "application/json",
    "content-length": String(Buffer.byteLength(payload)),
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  };
  const { signal } = request;
  if (signal?.aborted) throw providerError(choice, baseUrl, signal.reason);
  const controller = new AbortController();
  const timeoutMs = request.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
  const timer = setTimeout(() => controller.abort(timeoutError()), timeoutMs);
  const giveUp = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", giveUp, { once: true });
  const maxRetries = request.maxRetries ?? 2;
  try {
    for (let attempt = 0; ; attempt++) {
      const outcome = await post(url, headers, payload, controller.signal).then(
        (response) => ({ response }),
        (error: unknown) => ({ error }),
      );
      if ("response" in outcome && (outcome.response.statusCode ?? 500) < 300) {
        const { response } = outcome;
        return {
          response,
          baseUrl,
          done: () => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", giveUp);
            if (!response.body.readableEnded) controller.abort();
          },
        };
      }
      const failure = "response" in outcome ? await statusFailure(outcome.response) : outcome.error;
      const retryable = "error" in outcome || failure instanceof RetryableStatus;
      if (!retryable || attempt >= maxRetries || controller.signal.aborted) throw failure;
      await sleep(retryDelay(failure, attempt), controller.signal);
    }
  } catch (error) {
    clearTimeout(timer);
    signal?.removeEventListener("abort", giveUp);
    throw providerError(choice, baseUrl, controller.signal.aborted ? controller.signal.reason : error);
  }
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

/** 429 and 5xx may pass; any other status is the provider's final word. */
class RetryableStatus extends UpstreamStatusError {
  readonly retryAfterMs: number | undefined;

  constructor(statusCode: number, detail: string, retryAfterMs: number | undefined) {
    super(statusCode, detail);
    this.retryAfterMs = retryAfterMs;
  }
}

async function statusFailure(response: UpstreamResponse): Promise<UpstreamStatusError> {
  const status = response.statusCode ?? 500;
  const text = await readAll(response.body, 4096).catch(() => "");
  const detail = errorMessageOf(text);
  if (status !== 429 && status < 500) return new UpstreamStatusError(status, detail);
  return new RetryableStatus(status, detail, retryAfterOf(response));
}

function errorMessageOf(text: string): string {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === "string") return message.slice(0, 300);
  } catch {
    // Not JSON: the text itself, shortened.
  }
  return text.slice(0, 300);
}

/** `retry-after-ms`, else `retry-after` in seconds or as a date; ignored past a minute. */
function retryAfterOf(response: UpstreamResponse): number | undefined {
  const ms = Number(response.headers["retry-after-ms"]);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const header = response.headers["retry-after"];
  if (typeof header !== "string" || header.trim() === "") return undefined;
  const seconds = Number(header);
  const delay = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(delay) && delay >= 0 && delay <= 60_000 ? delay : undefined;
}

/** As the AI SDK does: the provider's Retry-After, else 2 s doubling with each attempt. */
function retryDelay(failure: unknown, attempt: number): number {
  const asked = failure instanceof RetryableStatus ? failure.retryAfterMs : undefined;
  return asked ?? 2000 * 2 ** attempt;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

function timeoutError(): Error {
  const error = new Error("The provider did not answer in time");
  error.name = "TimeoutError";
  return error;
}

/**
 * The body as text (at most about `limit` characters: past it the answer is dropped). Listeners, not an
 * async iterator: a completion's answer is read on every call, and the iterator's promises per chunk
 * cost more than the reading.
 */
function readAll(body: Readable, limit = Number.POSITIVE_INFINITY): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const settle = (error?: Error) => {
      body.off("data", onData).off("end", onEnd).off("error", settle).off("close", onClose);
      if (error) reject(error);
      else resolve(text);
    };
    const onData = (chunk: string) => {
      text += chunk;
      if (text.length > limit) {
        settle();
        body.destroy();
      }
    };
    const onEnd = () => settle();
    const onClose = () => settle(new Error("the connection closed before the answer was complete"));
    body.setEncoding("utf8");
    body.on("data", onData).on("end", onEnd).on("error", settle).on("close", onClose);
  });
}
