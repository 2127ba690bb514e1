import { call } from "../engine/call.ts";
import type { TriggerFn } from "../engine/types.ts";
import type { ModelChoice } from "./types.ts";

/** A model (catalog id or alias) and its provider, both from the catalog worker, in one call. */
export async function resolveChoice(trigger: TriggerFn, model: string): Promise<ModelChoice> {
  return call(trigger, "catalog::choice", { model });
}
