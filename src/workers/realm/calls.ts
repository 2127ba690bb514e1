import { systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import type { AppError } from "../../shared/errors.ts";

/** True when the error says the function is not registered (its worker is not running). */
export const isAbsent = (error: unknown): boolean =>
  (error as AppError | null)?.reason === "function_not_found";

/**
 * Calls into other workers run as the system: the realm worker has already checked the caller's own
 * access to the realm, and those workers' data (vault secrets, other realms' functions) is reached on
 * the realm's behalf, not the caller's.
 */
export function systemCaller(trigger: TriggerFn) {
  return <T>(function_id: string, payload: Record<string, unknown>): Promise<T> =>
    trigger({ function_id, payload, auth: systemPrincipal }) as Promise<T>;
}
export type SystemCall = ReturnType<typeof systemCaller>;

/** The call's answer, or `fallback` when its worker is not running (a worker is optional). */
export async function optional<T>(pending: Promise<T>, fallback: T): Promise<T> {
  try {
    return await pending;
  } catch (error) {
    if (isAbsent(error)) return fallback;
    throw error;
  }
}
