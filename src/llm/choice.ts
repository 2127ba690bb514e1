import type { TriggerFn } from "../engine/types.ts";
import type { ModelChoice } from "./generate.ts";
import type { ModelEntry, ProviderEntry } from "./types.ts";

/** A model (catalog id or alias) and its provider, both from the catalog worker. */
export async function resolveChoice(trigger: TriggerFn, model: string): Promise<ModelChoice> {
  const entry = (await trigger({ function_id: "catalog::resolve", payload: { model } })) as ModelEntry;
  const provider = (await trigger({
    function_id: "catalog::provider",
    payload: { id: entry.provider },
  })) as ProviderEntry;
  return { model: entry, provider };
}
