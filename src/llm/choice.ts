import type { TriggerFn } from "../engine/types.ts";
import type { ModelChoice, ModelEntry, ProviderEntry } from "./types.ts";

/** A model (catalog id or alias) and its provider, both from the catalog worker, in one call. */
export async function resolveChoice(trigger: TriggerFn, model: string): Promise<ModelChoice> {
  return (await trigger({ function_id: "catalog::choice", payload: { model } })) as {
    model: ModelEntry;
    provider: ProviderEntry;
  };
}
