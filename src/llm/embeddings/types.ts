import type { TriggerFn } from "../../engine/types.ts";
import type { CostAccount } from "../cost-event.ts";
import type { ModelChoice, ProviderEntry } from "../types.ts";

/**
 * Embeddings' contract in the LLM layer: what the catalog gives (`catalog::resolve_embedding`), what a
 * caller asks of `embed` and what it answers.
 */

/** An embedding model as the LLM layer needs it (the catalog worker owns the full record). */
export interface EmbeddingModel {
  id: string;
  provider: string;
  name?: string;
  /** The vectors' length by default; unknown for an unlisted `<provider>/<model>`. */
  dimensions?: number;
  /** Tokens one input may have. */
  maxInput: number;
  /** Inputs one request may carry. */
  maxBatch: number;
  /** USD per million input tokens. */
  inputPrice: number;
  local?: boolean;
}

/** An embedding model and the provider that serves it. */
export interface EmbeddingChoice {
  model: EmbeddingModel;
  provider: ProviderEntry;
}

export interface EmbedRequest {
  choice: EmbeddingChoice;
  /** Non-empty texts; each comes back as one vector, in the same order. */
  texts: readonly string[];
  trigger: TriggerFn;
  env: NodeJS.ProcessEnv;
  /** Checked before the call (realm open, budget) and charged after it, as a completion is. */
  account: CostAccount;
  /** The caller giving up: requests in flight are aborted, none is started. */
  signal?: AbortSignal;
  /** Shorter vectors, for the models that can (OpenAI's text-embedding-3, Gemini's). */
  dimensions?: number;
  /** The cost event's session, when the embedding is part of one. */
  sessionId?: string | null;
  /** Per request, retries included. */
  timeoutMs?: number;
  /** Retries per request on 429, 5xx and connection failures (Retry-After honoured). */
  maxRetries?: number;
  /** Requests in flight at once; 4 for hosted providers, 1 for local ones unless said. */
  concurrency?: number;
}

export interface EmbedResult {
  /** One per text, in the texts' order. */
  vectors: Float32Array[];
  usage: { inputTokens: number };
  /** The catalog's id of the model that embedded them. */
  model: string;
  /** The vectors' length as the provider answered (0 for no texts). */
  dimensions: number;
}

/** The embedding choice in the terms the cost event and the provider's errors take (no output tokens). */
export function asModelChoice(choice: EmbeddingChoice): ModelChoice {
  const { model } = choice;
  return {
    model: {
      id: model.id,
      provider: model.provider,
      ...(model.name ? { name: model.name } : {}),
      contextWindow: model.maxInput,
      maxOutput: 0,
      inputPrice: model.inputPrice,
      outputPrice: 0,
      supportsTools: false,
      ...(model.local ? { local: true } : {}),
    },
    provider: choice.provider,
  };
}
