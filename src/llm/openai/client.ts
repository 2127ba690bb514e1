import type { TriggerFn } from "../../engine/types.ts";
import { AppError } from "../../shared/errors.ts";
import type { UpstreamResponse } from "../http-client.ts";
import { providerError } from "../provider-errors.ts";
import { apiKeyOf, baseUrlOf, envApiKeyOf, missingKey } from "../providers.ts";
import { postWithRetries, readAll } from "../transport.ts";
import { DEFAULT_LLM_TIMEOUT_MS, type ModelChoice, type Usage } from "../types.ts";
import type { OpenAiUsage } from "./api-types.ts";
import { openAiErrorMessage } from "./errors.ts";
import { fromOpenAiUsage } from "./usage.ts";

/**
 * An OpenAI-wire provider's endpoint over the transport: where it is, its key, the headers, and the
 * answer read as OpenAI words it. The pass-through and the OpenAI-wire driver both call through here.
 */

/** Providers that speak OpenAI's wire format: OpenAI itself and the OpenAI-compatible ones. */
export function speaksOpenAi(choice: ModelChoice): boolean {
  return choice.provider.driver === "openai" || choice.provider.driver === "openai_compat";
}

export interface OpenAiRequest {
  choice: ModelChoice;
  /** The JSON body, as sent. */
  payload: string;
  /** Asks for server-sent events instead of one JSON answer. */
  stream: boolean;
  env: NodeJS.ProcessEnv;
  trigger: TriggerFn;
  /** The provider's endpoint under its base URL; `/chat/completions` unless said (`/embeddings`). */
  path?: string;
  timeoutMs?: number;
  /** Retries on 429, 5xx and connection failures before anything was received (Retry-After honoured). */
  maxRetries?: number;
  /** The caller giving up (an agent's turn aborted): the provider's request goes too. */
  signal?: AbortSignal;
}

/** An open call: the provider's 2xx answer, read as it comes. */
export interface OpenAiCall {
  response: UpstreamResponse;
  /** For error messages (the provider's base URL, possibly overridden). */
  baseUrl: string;
  /** Ends the call: stops the timer and, when the answer was not read to its end, aborts it. */
  done(): void;
}

/** The provider's 2xx answer, headers received; any failure is worded for the provider (AppError). */
export async function openOpenAiCall(request: OpenAiRequest): Promise<OpenAiCall> {
  const { choice, env, trigger, stream, payload } = request;
  const baseUrl = baseUrlOf(choice.provider, env);
  const apiKey = envApiKeyOf(choice.provider, env) ?? (await apiKeyOf(choice.provider, env, trigger));
  if (!apiKey && !choice.provider.local) throw missingKey(choice.provider);
  let url: URL;
  try {
    url = endpointUrl(`${baseUrl.replace(/\/+$/, "")}${request.path ?? "/chat/completions"}`);
  } catch {
    throw new AppError("unavailable", `Provider ${choice.provider.id} has an invalid base URL`);
  }
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: stream ? "text/event-stream" : "application/json",
    "content-length": String(Buffer.byteLength(payload)),
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  };
  try {
    const call = await postWithRetries({
      url,
      headers,
      payload,
      timeoutMs: request.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS,
      maxRetries: request.maxRetries ?? 2,
      signal: request.signal,
      detailOf: (body) => openAiErrorMessage(withoutKey(body, apiKey)),
    });
    return { ...call, baseUrl };
  } catch (error) {
    throw providerError(choice, baseUrl, error);
  }
}

/**
 * A provider's error body without the API key it was sent: the detail reaches whoever made the call
 * (a realm's key), and some gateways in front of a provider quote the key they got in their errors.
 * Taken out before the detail is cut short, so no part of it is left either. A short placeholder (what a
 * local server may be given) is left: replacing it would garble the words and protect nothing.
 */
function withoutKey(body: string, apiKey: string | undefined): string {
  return apiKey && apiKey.length >= 8 ? body.replaceAll(apiKey, "[the API key]") : body;
}

/**
 * Endpoint URLs by their text, parsed once: a provider's base URL and path seldom change, and the
 * transport only reads them. Bounded, since base URLs come from the environment and the catalog.
 */
const endpoints = new Map<string, URL>();
const MAX_ENDPOINTS = 64;

function endpointUrl(text: string): URL {
  let url = endpoints.get(text);
  if (!url) {
    url = new URL(text);
    if (endpoints.size >= MAX_ENDPOINTS) endpoints.clear();
    endpoints.set(text, url);
  }
  return url;
}

/** A provider's JSON answer: its fields of ours (usage), the rest passed on as it came. */
export type OpenAiJson = Record<string, unknown> & { usage?: OpenAiUsage };

/**
 * A non-streamed call: the answer's text and its parsed JSON, once its usage was handed to `onUsage`
 * (awaited: the ledger records the cost before the answer goes out).
 */
export async function requestJson(
  request: OpenAiRequest,
  onUsage: (usage: Usage) => Promise<void>,
): Promise<{ text: string; answer: OpenAiJson }> {
  const call = await openOpenAiCall(request);
  try {
    const text = await readAll(call.response.body);
    let answer: OpenAiJson;
    try {
      answer = JSON.parse(text) as OpenAiJson;
    } catch (error) {
      throw new Error(`the answer is not JSON (${(error as Error).message})`);
    }
    await onUsage(fromOpenAiUsage(answer.usage));
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
