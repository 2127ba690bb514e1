import { systemPrincipal, type TriggerFn } from "./types.ts";

/**
 * Calls into other workers made as the system: for cascades and lookups on a realm's behalf, after the
 * caller's own access to that realm was checked.
 */
export function systemCaller(trigger: TriggerFn) {
  return <T = unknown>(function_id: string, payload: Record<string, unknown>): Promise<T> =>
    trigger({ function_id, payload, auth: systemPrincipal }) as Promise<T>;
}
export type SystemCall = ReturnType<typeof systemCaller>;
