import { AppError, isAppError } from "../../shared/errors.ts";
import { utf8Head } from "../../shared/utf8.ts";
import { costEvent, recordCost } from "../cost-event.ts";
import { assertMaySpend, assertProviderOpen } from "../guards.ts";
import { requestJson } from "../openai/client.ts";
import { type EmbeddingEncoding, fromEmbeddingsAnswer, toEmbeddingsRequest } from "../openai/embeddings.ts";
import { providerError } from "../provider-errors.ts";
import { baseUrlOf } from "../providers.ts";
import type { ProviderEntry } from "../types.ts";
import { type Batch, planBatches } from "./batches.ts";
import { embeddingsPath } from "./endpoint.ts";
import { asModelChoice, type EmbedRequest, type EmbedResult } from "./types.ts";

/**
 * Texts as vectors, from a provider that speaks OpenAI's `/embeddings` (OpenAI, Gemini's compatible
 * endpoint, Ollama, vLLM, LM Studio and the other compatible hosts), through the same provider layer as
 * completions: the key from the environment or the vault, the base URL override, the transport's
 * retries (429 and 5xx, Retry-After). Before any request the account's realm must be open and its
 * budget not spent (a refusal makes no request); after, the input tokens are charged to the account
 * once, at the model's price, as a completion's are (also when a later batch failed: what was embedded
 * was paid for). Texts are sent in batches (the model's `maxBatch`, and a cap on characters), a few at
 * a time, and come back in their order.
 */
export async function embed(request: EmbedRequest): Promise<EmbedResult> {
  const { choice, trigger, account } = request;
  request.texts.forEach((text, index) => {
    if (typeof text !== "string" || text.length === 0) {
      throw new AppError(
        "validation",
        `Text ${index} to embed is empty: every text needs at least a character`,
      );
    }
  });
  if (request.texts.length === 0)
    return { vectors: [], usage: { inputTokens: 0 }, model: choice.model.id, dimensions: 0 };
  // A token is at least a byte to the byte-level tokenizers providers use, so a text cut to the model's
  // input in bytes never passes it: one text too long fails its whole batch at the provider, each retry
  // (code and non-Latin scripts run 1 to 3 bytes a token; cut between characters).
  const maxBytes = Math.max(4, choice.model.maxInput);
  const texts = request.texts.map((text) => utf8Head(text, maxBytes));
  assertProviderOpen(choice.provider, account.realmId);
  await assertMaySpend(trigger, account);

  const vectors = new Array<Float32Array>(texts.length);
  let inputTokens = 0;
  const batches = planBatches(texts, choice.model.maxBatch);
  // The first failure stops the batches not yet sent and aborts those in flight.
  const stop = new AbortController();
  const giveUp = () => stop.abort(request.signal?.reason);
  request.signal?.addEventListener("abort", giveUp, { once: true });
  let failure: unknown;
  try {
    let next = 0;
    const worker = async () => {
      while (next < batches.length && !stop.signal.aborted) {
        const batch = batches[next++] as Batch;
        const answer = await embedBatch(request, batch, stop.signal);
        inputTokens += answer.inputTokens;
        answer.vectors.forEach((vector, offset) => {
          vectors[batch.start + offset] = vector;
        });
      }
    };
    const concurrency = request.concurrency ?? (choice.provider.local ? 1 : 4);
    const workers = Array.from({ length: Math.max(1, Math.min(concurrency, batches.length)) }, () =>
      worker().catch((error: unknown) => {
        failure ??= error;
        stop.abort(error);
      }),
    );
    await Promise.all(workers);
    if (!failure && request.signal?.aborted) failure = request.signal.reason;
  } finally {
    request.signal?.removeEventListener("abort", giveUp);
    // What the provider embedded was paid for, whether or not every batch made it.
    if (inputTokens > 0) {
      const usage = { inputTokens, outputTokens: 0, totalTokens: inputTokens };
      await recordCost(trigger, costEvent(account, request.sessionId ?? null, asModelChoice(choice), usage));
    }
  }
  if (failure) throw failure;
  const dimensions = vectors[0]?.length ?? 0;
  const asked = request.dimensions;
  const odd = vectors.findIndex((vector) => vector.length !== (asked ?? dimensions));
  if (odd >= 0) {
    throw providerError(
      asModelChoice(choice),
      baseUrlOf(choice.provider, request.env),
      new Error(
        `text ${odd} came back with ${vectors[odd]?.length} dimensions, not the ${asked ?? dimensions} ${asked ? "asked" : "of the others"}`,
      ),
    );
  }
  return { vectors, usage: { inputTokens }, model: choice.model.id, dimensions };
}

/** OpenAI itself answers base64 when asked; compatible servers do not all understand it, so they get floats. */
export function encodingFor(provider: Pick<ProviderEntry, "driver">): EmbeddingEncoding {
  return provider.driver === "openai" ? "base64" : "float";
}

async function embedBatch(request: EmbedRequest, batch: Batch, signal: AbortSignal) {
  const { choice, env, trigger } = request;
  const modelChoice = asModelChoice(choice);
  const baseUrl = baseUrlOf(choice.provider, env);
  const body = toEmbeddingsRequest(
    choice.model.id,
    batch.texts,
    encodingFor(choice.provider),
    request.dimensions,
  );
  const { answer } = await requestJson(
    {
      choice: modelChoice,
      payload: JSON.stringify(body),
      stream: false,
      env,
      trigger,
      path: embeddingsPath(choice.provider, baseUrl),
      timeoutMs: request.timeoutMs,
      maxRetries: request.maxRetries,
      signal,
    },
    async () => {},
  );
  try {
    return fromEmbeddingsAnswer(answer, batch.texts.length);
  } catch (error) {
    throw isAppError(error) ? error : providerError(modelChoice, baseUrl, error);
  }
}
