import { call } from "../engine/call.ts";
import { systemPrincipal, type TriggerFn } from "../engine/types.ts";

/**
 * A vault secret read as the service, or undefined when it is not set, empty, or the vault cannot be
 * read (no vault worker, a wrong key): the callers treat all of those as "not configured".
 */
export async function vaultSecret(trigger: TriggerFn, key: string): Promise<string | undefined> {
  try {
    const found = await call(trigger, "vault::get", { key }, { auth: systemPrincipal });
    return found?.value || undefined;
  } catch {
    return undefined;
  }
}
