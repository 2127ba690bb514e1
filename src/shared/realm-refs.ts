import { systemPrincipal, type TriggerFn } from "../engine/types.ts";
import { type AppError, conflict, notFound } from "./errors.ts";

/** What other workers need to know about a realm (the realm worker owns the full record). */
export interface RealmRef {
  id: string;
  name: string;
  owner: string;
  status: "Active" | "Paused" | "Archived";
  defaultModel?: string;
  maxAgents?: number;
  /** Set while realm::delete purges the realm's data: nothing new may be written into it. */
  deleting?: boolean;
}

const absent = (error: unknown) => (error as AppError | null)?.reason === "function_not_found";

/**
 * The realm, read as the system (callers check the caller's own access with assertRealmAccess).
 * A missing realm is a 404 naming it; with `write`, an archived realm is a 409 (read-only). Without a
 * realm worker at all (a worker tested alone) there is nothing to check and the answer is undefined.
 */
export async function requireRealm(
  trigger: TriggerFn,
  realmId: string,
  options: { write?: boolean } = {},
): Promise<RealmRef | undefined> {
  let realm: RealmRef;
  try {
    realm = (await trigger({
      function_id: "realm::get",
      payload: { id: realmId },
      auth: systemPrincipal,
    })) as RealmRef;
  } catch (error) {
    if (absent(error)) return undefined;
    throw error;
  }
  if (options.write && realm.status === "Archived") {
    throw conflict(`Realm ${realmId} is archived and read-only`);
  }
  if (options.write && realm.deleting) throw conflict(`Realm ${realmId} is being deleted`);
  return realm;
}

/** The agent must exist in the realm: an agent of another realm reads as missing (no cross-realm probing). */
export async function requireAgentInRealm(
  trigger: TriggerFn,
  agentId: string,
  realmId: string,
): Promise<void> {
  let agent: { realmId?: string };
  try {
    agent = (await trigger({
      function_id: "agent::get",
      payload: { id: agentId },
      auth: systemPrincipal,
    })) as {
      realmId?: string;
    };
  } catch (error) {
    if (absent(error)) return;
    if ((error as AppError | null)?.code === "not_found")
      throw notFound(`Agent ${agentId} not found in realm ${realmId}`);
    throw error;
  }
  if (agent.realmId !== realmId) throw notFound(`Agent ${agentId} not found in realm ${realmId}`);
}
