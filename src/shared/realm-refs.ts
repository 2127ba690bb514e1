import { systemPrincipal, type TriggerFn } from "../engine/types.ts";
import { type AppError, conflict, isFunctionNotFound, notFound } from "./errors.ts";

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

/**
 * The realm, read as the system (callers check the caller's own access with assertRealmAccess).
 * A missing realm is a 404 naming it; with `write`, an archived realm or one being deleted is a 409
 * (read-only). Without `write` a realm being deleted is returned (with `deleting: true`): callers that
 * add records to it check that themselves. Without a realm worker at all (a worker tested alone) there
 * is nothing to check and the answer is undefined.
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
    if (isFunctionNotFound(error)) return undefined;
    throw error;
  }
  if (options.write && realm.status === "Archived") {
    throw conflict(`Realm ${realmId} is archived and read-only`);
  }
  if (options.write && realm.deleting) throw conflict(`Realm ${realmId} is being deleted`);
  return realm;
}

/**
 * After a write into a realm that passed requireRealm, the realm is read again. realm::delete marks the
 * realm (`deleting`) before it purges anything, so a write that raced with a delete either finished
 * before the marker (and the delete's purges remove it) or sees the marker here: then `undo` takes the
 * worker's records of the realm away again (its own purge, which is idempotent) and the write fails with
 * 409 (or 404 when the realm is gone altogether). Nothing written meanwhile outlives the realm.
 */
export async function recheckRealm(
  trigger: TriggerFn,
  realmId: string,
  undo: () => Promise<unknown>,
): Promise<void> {
  let realm: RealmRef | undefined;
  try {
    realm = await requireRealm(trigger, realmId);
  } catch (error) {
    if ((error as AppError | null)?.code === "not_found") await undo();
    throw error;
  }
  if (realm?.deleting) {
    await undo();
    throw conflict(`Realm ${realmId} is being deleted`);
  }
}

/**
 * The agent must exist in the realm: an agent of another realm reads as missing (no cross-realm
 * probing), and so does an agent being deleted (`status: "deleting"`, set by agent::delete before it
 * purges the agent's records elsewhere), so nothing new is attached to it.
 */
export async function requireAgentInRealm(
  trigger: TriggerFn,
  agentId: string,
  realmId: string,
): Promise<void> {
  let agent: { realmId?: string; status?: string };
  try {
    agent = (await trigger({
      function_id: "agent::get",
      payload: { id: agentId },
      auth: systemPrincipal,
    })) as { realmId?: string; status?: string };
  } catch (error) {
    if (isFunctionNotFound(error)) return;
    if ((error as AppError | null)?.code === "not_found") throw agentNotFound(agentId, realmId);
    throw error;
  }
  if (agent.realmId !== realmId || agent.status === AGENT_DELETING) throw agentNotFound(agentId, realmId);
}

/**
 * As recheckRealm, for a write that attached a record to an agent (checked with requireAgentInRealm
 * before): agent::delete marks the agent before it calls the `*::purge_agent` functions, so when the
 * agent reads as missing now, `undo` removes what was just written and the write fails with 404.
 */
export async function recheckAgent(
  trigger: TriggerFn,
  agentId: string,
  realmId: string,
  undo: () => Promise<unknown>,
): Promise<void> {
  try {
    await requireAgentInRealm(trigger, agentId, realmId);
  } catch (error) {
    if ((error as AppError | null)?.code === "not_found") await undo();
    throw error;
  }
}

/** The status agent::delete gives an agent before it purges the agent's records in other workers. */
export const AGENT_DELETING = "deleting";

const agentNotFound = (agentId: string, realmId: string) =>
  notFound(`Agent ${agentId} not found in realm ${realmId}`);
