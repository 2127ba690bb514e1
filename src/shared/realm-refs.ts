import { call } from "../engine/call.ts";
import { RecentReads } from "../engine/state/watch.ts";
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
  // A check before a write reads the realm itself; a read-only check (before a model call, say) may use
  // the realm as this caller read it moments ago.
  const realm = options.write ? await readRealm(trigger, realmId) : await recentRealm(trigger, realmId);
  if (realm === undefined) return undefined;
  if (options.write && realm.status === "Archived") {
    throw conflict(`Realm ${realmId} is archived and read-only`);
  }
  if (options.write && realm.deleting) throw conflict(`Realm ${realmId} is being deleted`);
  return realm;
}

async function readRealm(trigger: TriggerFn, realmId: string): Promise<RealmRef | undefined> {
  try {
    return await call(trigger, "realm::get", { id: realmId }, { auth: systemPrincipal });
  } catch (error) {
    if (isFunctionNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * Realm records as each caller read them (issue #14: an agent's turn read its realm four times), kept
 * until any realm record is written in this process or REALM_READ_TTL_MS pass — so a realm paused,
 * archived or being deleted by another cluster node (or a CLI process on the same file) reaches the
 * checks here within that time; a write of this process at once. Keyed by the caller's trigger, so two
 * services in one process (as in tests) never share records.
 */
const REALM_READ_TTL_MS = 1000;
// The realm worker's scope (REALMS_SCOPE), named here: shared code does not reach into a worker.
const recentRealms = new RecentReads<TriggerFn, RealmRef | undefined>(REALM_READ_TTL_MS);

function recentRealm(trigger: TriggerFn, realmId: string): Promise<RealmRef | undefined> {
  return recentRealms.read(trigger, "realms", realmId, () => readRealm(trigger, realmId));
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
    // Read now, not as remembered: this is what catches a delete that raced the write.
    realm = await readRealm(trigger, realmId);
    if (realm === undefined) return;
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
 * purges the agent's records elsewhere), so nothing new is attached to it. True when the agents worker
 * knows it (false only without an agents worker: nothing to check), as recheckAgentRef's `known`.
 */
export async function requireAgentInRealm(
  trigger: TriggerFn,
  agentId: string,
  realmId: string,
): Promise<boolean> {
  let agent: { realmId?: string; status?: string };
  try {
    agent = await call(trigger, "agent::get", { id: agentId }, { auth: systemPrincipal });
  } catch (error) {
    if (isFunctionNotFound(error)) return false;
    if ((error as AppError | null)?.code === "not_found") throw agentNotFound(agentId, realmId);
    throw error;
  }
  if (agent.realmId !== realmId || agent.status === AGENT_DELETING) throw agentNotFound(agentId, realmId);
  return true;
}

/**
 * Agent ids in the control plane are opaque (DESIGN §5): an id the agents worker does not know is
 * accepted (an agent of an external runtime, a remote worker, or one created later). An id it does know
 * must be of this realm and not being deleted, exactly as requireAgentInRealm checks: a realm cannot
 * attach records to another realm's agent, nor probe which ids exist elsewhere.
 */
export async function assertAgentRef(trigger: TriggerFn, agentId: string, realmId: string): Promise<boolean> {
  const known = await knownAgent(trigger, agentId);
  if (known && (known.realmId !== realmId || known.status === AGENT_DELETING)) {
    throw agentNotFound(agentId, realmId);
  }
  return known !== null;
}

/**
 * As recheckRealm, for a write that attached a record to an agent id (checked with assertAgentRef
 * before, which said whether the agents worker knew it: `known`): agent::delete marks the agent before
 * it calls the `*::purge_agent` functions, so when a known agent reads as going now, or as gone (a
 * whole delete can pass between the check and the write), `undo` removes what was just written and the
 * write fails with 404.
 */
export async function recheckAgentRef(
  trigger: TriggerFn,
  agentId: string,
  realmId: string,
  known: boolean,
  undo: () => Promise<unknown>,
): Promise<void> {
  try {
    const still = await assertAgentRef(trigger, agentId, realmId);
    if (known && !still) throw agentNotFound(agentId, realmId);
  } catch (error) {
    if ((error as AppError | null)?.code === "not_found") await undo();
    throw error;
  }
}

async function knownAgent(
  trigger: TriggerFn,
  agentId: string,
): Promise<{ realmId?: string; status?: string } | null> {
  try {
    return await call(trigger, "agent::get", { id: agentId }, { auth: systemPrincipal });
  } catch (error) {
    if (isFunctionNotFound(error) || (error as AppError | null)?.code === "not_found") return null;
    // An id agent::get refuses as input (too long, say) names no agent of ours.
    if ((error as AppError | null)?.code === "validation") return null;
    throw error;
  }
}

/** The status agent::delete gives an agent before it purges the agent's records in other workers. */
export const AGENT_DELETING = "deleting";

const agentNotFound = (agentId: string, realmId: string) =>
  notFound(`Agent ${agentId} not found in realm ${realmId}`);
