import type { SystemCall } from "../engine/system-call.ts";

/**
 * Every registered function whose id ends with `suffix` (`::purge_realm`, `::purge_agent`): whatever
 * workers run now take part in a cascade by registering one, remote workers included.
 */
export async function purgeFunctionIds(call: SystemCall, suffix: string): Promise<string[]> {
  const { functions } = await call<{ functions: Array<{ function_id: string }> }>("engine::functions::list", {
    include_internal: true,
  });
  return functions.map((fn) => fn.function_id).filter((id) => id.endsWith(suffix));
}
