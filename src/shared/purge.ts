/** A call into another worker, made as the system (the cascade's caller was checked already). */
export type SystemCallFn = (function_id: string, payload: Record<string, unknown>) => Promise<unknown>;

/**
 * Every registered function whose id ends with `suffix` (`::purge_realm`, `::purge_agent`): whatever
 * workers run now take part in a cascade by registering one, remote workers included.
 */
export async function purgeFunctionIds(call: SystemCallFn, suffix: string): Promise<string[]> {
  const { functions } = (await call("engine::functions::list", { include_internal: true })) as {
    functions: Array<{ function_id: string }>;
  };
  return functions.map((fn) => fn.function_id).filter((id) => id.endsWith(suffix));
}
