import { call } from "../../engine/call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import type { EmbeddingChoice } from "./types.ts";

/**
 * An embedding model (catalog id, alias or `<provider>/<model>`; the service's default,
 * AGENTOS_EMBEDDING_MODEL or the catalog's, when left out) and its provider, from the catalog worker.
 */
export async function resolveEmbeddingChoice(trigger: TriggerFn, model?: string): Promise<EmbeddingChoice> {
  return call(trigger, "catalog::resolve_embedding", model ? { model } : {});
}

/**
 * The embedding model an agent's memory uses: its own `embeddingModel`, else AGENTOS_EMBEDDING_MODEL
 * when set, else none (null: no embedding call is made, recall is by text alone). Only the variable
 * counts as the service's default: the catalog's `defaults.embedding` never turns embeddings on.
 */
export function effectiveEmbeddingModel(
  agent: { embeddingModel?: string | null },
  env: NodeJS.ProcessEnv,
): string | null {
  return agent.embeddingModel?.trim() || env.AGENTOS_EMBEDDING_MODEL?.trim() || null;
}
