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
