import { systemCall, systemCallFound } from "../../engine/system-call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { isFunctionNotFound } from "../../shared/errors.ts";
import { PURGE_REALM_SUFFIX } from "../../shared/internal-functions.ts";
import { purgeFunctionIds } from "../../shared/purge.ts";
import { optional } from "./calls.ts";

/** Secrets of a realm live in the vault as `realm:<realmId>:<name>`. */
export const secretPrefix = (realmId: string) => `realm:${realmId}:`;

/**
 * Pulses go first, so no tick wakes an agent halfway through the delete; agents next to last, so every
 * other worker's purge can still look them up; the realm's API keys last, so until everything else is
 * gone the tenant can still see its realm (and a delete that failed halfway). The rest run in a stable
 * (alphabetical) order.
 */
function purgeOrder(ids: string[]): string[] {
  const rank = (id: string) =>
    id.startsWith("pulse::") ? 0 : id.startsWith("agent::") ? 2 : id.startsWith("auth::") ? 3 : 1;
  return [...ids].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/**
 * Everything of a realm except its own record: each worker's `<group>::purge_realm {realmId}` (whatever
 * workers are running now, so a new realm-scoped worker is covered by registering one), then the realm's
 * secrets. Purges are idempotent: when one fails the error goes up, and a retry finishes the job.
 */
export async function purgeRealmData(trigger: TriggerFn, realmId: string): Promise<void> {
  // Whatever functions are registered now: their ids are found, not written here.
  const purges = purgeOrder(await purgeFunctionIds(trigger, PURGE_REALM_SUFFIX));
  for (const id of purges) await systemCallFound(trigger, id, { realmId });
  await deleteSecrets(trigger, realmId);
}

async function deleteSecrets(trigger: TriggerFn, realmId: string): Promise<void> {
  const { keys } = await optional(systemCall(trigger, "vault::list", { prefix: secretPrefix(realmId) }), {
    keys: [],
    count: 0,
  });
  for (const { key } of keys) {
    await systemCall(trigger, "vault::delete", { key }).catch((error) => {
      // Gone already (a concurrent delete): that is the state wanted.
      if (!isFunctionNotFound(error) && (error as { code?: string }).code !== "not_found") throw error;
    });
  }
}

/** The realm's secrets by name (without the prefix), decrypted: only for an unscrubbed export. */
export async function readSecrets(trigger: TriggerFn, realmId: string): Promise<Record<string, string>> {
  const prefix = secretPrefix(realmId);
  const { keys } = await optional(systemCall(trigger, "vault::list", { prefix }), { keys: [], count: 0 });
  const secrets: Record<string, string> = {};
  for (const { key } of keys) {
    const secret = await systemCall(trigger, "vault::get", { key });
    if (secret) secrets[key.slice(prefix.length)] = secret.value;
  }
  return secrets;
}
