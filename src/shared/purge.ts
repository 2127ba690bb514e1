import { systemCall } from "../engine/system-call.ts";
import type { TriggerFn } from "../engine/types.ts";

/**
 * Every registered function whose id ends with `suffix` (`::purge_realm`, `::purge_agent`): whatever
 * workers run now take part in a cascade by registering one, remote workers included.
 */
export async function purgeFunctionIds(trigger: TriggerFn, suffix: string): Promise<string[]> {
  const { functions } = await systemCall(trigger, "engine::functions::list", { include_internal: true });
  return functions.map((fn) => fn.function_id).filter((id) => id.endsWith(suffix));
}
