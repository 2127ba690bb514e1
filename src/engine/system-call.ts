import { call, type FunctionId, type InputOf, type OutputOf } from "./call.ts";
import { systemPrincipal, type TriggerFn } from "./types.ts";

/**
 * Another worker's function called as the system: for cascades and lookups on a realm's behalf, after
 * the caller's own access to that realm was checked, and for the service's own start-up work.
 */
export function systemCall<Id extends FunctionId>(
  trigger: TriggerFn,
  id: Id,
  input: InputOf<Id>,
): Promise<OutputOf<Id>> {
  return call(trigger, id, input, { auth: systemPrincipal });
}

/** A function whose id is found at run time (each worker's `*::purge_realm`), as the system. */
export function systemCallFound(
  trigger: TriggerFn,
  id: string,
  payload: Record<string, unknown>,
): Promise<unknown> {
  return trigger({ function_id: id, payload, auth: systemPrincipal });
}
