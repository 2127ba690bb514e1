import { publishEvent } from "../../engine/events.ts";
import { casUpdate } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { systemCallFound } from "../../engine/system-call.ts";
import type { InvocationContext, TriggerFn } from "../../engine/types.ts";
import { assertRealmAccess } from "../../shared/access.ts";
import { AGENT_LIFECYCLE_TOPIC, type AgentLifecycleEvent } from "../../shared/agent-events.ts";
import { nowIso } from "../../shared/clock.ts";
import { type AppError, isFunctionNotFound, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { PURGE_AGENT_SUFFIX } from "../../shared/internal-functions.ts";
import { decodeCursor, encodeCursor } from "../../shared/pagination.ts";
import { purgeFunctionIds } from "../../shared/purge.ts";
import { AGENT_DELETING, type RealmRef, requireRealm } from "../../shared/realm-refs.ts";
import type { DeletedAgents } from "./deleted-agents.ts";
import { claimName, indexName, releaseName, unindexName } from "./name-index.ts";
import {
  abandonSlot,
  agentIdsPage,
  dropRealmCount,
  indexAgent,
  realmAgentIds,
  reserveSlot,
  unindexAge,
  unindexAgent,
} from "./realm-index.ts";
import {
  checkNameFree,
  checkTools,
  usableEmbeddingModel,
  usableModel,
  usableModelName,
} from "./references.ts";
import {
  type Agent,
  type CreateAgentInput,
  DEFAULT_REALM,
  profilePatterns,
  type UpdateAgentInput,
} from "./schema.ts";
import { AGENTS_SCOPE, deleteAgentData } from "./store.ts";

export interface LifecycleDeps {
  trigger: TriggerFn;
  state: StateClient;
  /** Resolves once agents created before the realm index existed are indexed. */
  backfilled: () => Promise<void>;
  /** Told of each agent deleted here, before its data goes (turns ending check it). */
  deleted: DeletedAgents;
}

const agentExists = async (state: StateClient, agentId: string) => {
  const agent = await state.get<Agent>(AGENTS_SCOPE, agentId);
  return agent !== null && (agent.status as string) !== AGENT_DELETING;
};

/** The realm must exist, not be archived (read-only) and not be going away. */
const writableRealm = (trigger: TriggerFn, realmId: string): Promise<RealmRef | undefined> =>
  requireRealm(trigger, realmId, { write: true });

/**
 * A new agent in the caller's realm (or the one named). The realm's default model applies when no model
 * is named, and its maxAgents through a slot taken by compare-and-swap before the agent is written.
 */
export async function createAgent(
  deps: LifecycleDeps,
  input: CreateAgentInput,
  ctx: InvocationContext,
): Promise<{ id: string }> {
  const realmId = input.realmId ?? (ctx.auth.kind === "realm" ? ctx.auth.realmId : DEFAULT_REALM);
  assertRealmAccess(ctx, realmId);
  const realm = await writableRealm(deps.trigger, realmId);
  const agent = await configure(deps.trigger, input, realmId, realm?.defaultModel);
  await checkNameFree(deps.trigger, agent.name);
  await checkTools(deps.trigger, input.tools);
  await deps.backfilled();
  await claimName(deps.state, agent, (agentId) => agentExists(deps.state, agentId));
  try {
    await reserveSlot(deps.state, realmId, realm?.maxAgents);
  } catch (error) {
    await releaseName(deps.state, agent).catch(() => undefined);
    throw error;
  }
  try {
    await indexAgent(deps.state, agent);
    await indexName(deps.state, agent);
    await deps.state.set(AGENTS_SCOPE, agent.id, agent, 0);
  } catch (error) {
    await unindexName(deps.state, agent).catch(() => undefined);
    await releaseName(deps.state, agent).catch(() => undefined);
    await abandonSlot(deps.state, realmId, agent.id).catch(() => undefined);
    throw error;
  }
  // Checked again after the write: a realm delete that started meanwhile either sees this agent in the
  // index (its purge removes it) or is seen here (and the agent is taken back), never neither.
  try {
    await writableRealm(deps.trigger, realmId);
  } catch (error) {
    await removeAgent(deps, agent);
    // The realm's purge drops its agent count, and may have done so before this agent took its slot.
    if (await realmLeaving(deps.trigger, realmId)) await dropRealmCount(deps.state, realmId);
    throw error;
  }
  publish(deps.trigger, {
    type: "created",
    agentId: agent.id,
    realmId,
    embeddingModel: agent.embeddingModel ?? null,
  });
  return { id: agent.id };
}

/** Gone, or being deleted: nothing of it should stay, its agent count included. */
async function realmLeaving(trigger: TriggerFn, realmId: string): Promise<boolean> {
  try {
    return (await requireRealm(trigger, realmId))?.deleting === true;
  } catch (error) {
    return (error as AppError).code === "not_found";
  }
}

const publish = (trigger: TriggerFn, event: AgentLifecycleEvent) =>
  publishEvent(trigger, AGENT_LIFECYCLE_TOPIC, event);

async function configure(
  trigger: TriggerFn,
  input: CreateAgentInput,
  realmId: string,
  realmModel: string | undefined,
): Promise<Agent> {
  const model = await usableModelName(trigger, input.model ?? realmModel, realmId);
  for (const fallback of input.fallbackModels ?? []) await usableModel(trigger, fallback, realmId);
  const { embeddingModel, ...fields } = input;
  const embedding =
    embeddingModel == null ? undefined : await usableEmbeddingModel(trigger, embeddingModel, realmId);
  const now = nowIso();
  return {
    ...fields,
    ...(embedding === undefined ? {} : { embeddingModel: embedding }),
    id: newId("agent"),
    model,
    tools: input.tools ?? profilePatterns[input.toolProfile],
    realmId,
    status: "active",
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * agent::delete: an archived realm is read-only, its agents included. An agent whose realm is gone
 * altogether may still be deleted (there is nothing left to protect, and it should not linger).
 *
 * The agent is marked `status: "deleting"` before anything is purged: from then on other workers read
 * it as missing (requireAgentInRealm answers 404, so no org-chart node, pulse or budget is attached to
 * it behind the purge) and it takes no messages (409, it is not active). A delete that fails leaves the
 * mark (the agent stays visible, as deleting, and inert); a retry finishes the job.
 */
export async function deleteAgent(deps: LifecycleDeps, agent: Agent): Promise<void> {
  try {
    await writableRealm(deps.trigger, agent.realmId);
  } catch (error) {
    if ((error as AppError).code !== "not_found") throw error;
  }
  deps.deleted.add(agent.id);
  await markDeleting(deps.state, agent.id);
  await purgeAgentElsewhere(deps.trigger, agent);
  await removeAgent(deps, agent);
  publish(deps.trigger, { type: "deleted", agentId: agent.id, realmId: agent.realmId });
}

/** An agent record as stored: `deleting` is a status only agent::delete gives (see deleteAgent). */
type StoredAgent = Omit<Agent, "status"> & { status: Agent["status"] | typeof AGENT_DELETING };

async function markDeleting(state: StateClient, agentId: string): Promise<void> {
  await casUpdate<StoredAgent>(state, AGENTS_SCOPE, agentId, ({ value }) =>
    !value || value.status === AGENT_DELETING
      ? undefined
      : { ...value, status: AGENT_DELETING, updatedAt: nowIso() },
  );
}

/**
 * Other workers' records of the agent (its place in the org chart, its pulse) go with it, through every
 * `*::purge_agent`; a realm delete does not need this, since each worker purges the whole realm.
 */
async function purgeAgentElsewhere(trigger: TriggerFn, agent: Pick<Agent, "id" | "realmId">): Promise<void> {
  for (const id of await purgeFunctionIds(trigger, PURGE_AGENT_SUFFIX)) {
    await systemCallFound(trigger, id, { realmId: agent.realmId, agentId: agent.id });
  }
}

/**
 * The agent and all its data. Memory goes first: if it cannot be forgotten the delete fails and can be
 * retried, rather than succeeding with the memory left behind (only an absent memory worker is skipped).
 * The index entry goes last, so an interrupted delete is still found (and finished) by a realm purge.
 */
export async function removeAgent(deps: LifecycleDeps, agent: Pick<Agent, "id" | "realmId">): Promise<void> {
  deps.deleted.add(agent.id);
  // As the service: the delete is authorized already, and an agent deleting another (a workflow step
  // acting for it) may not use that agent's memory, which left the agent stuck `deleting`.
  await systemCallFound(deps.trigger, "memory::forget_agent", { agentId: agent.id }).catch((error) => {
    if (!isFunctionNotFound(error)) throw error;
  });
  const stored = await deps.state.get<Agent>(AGENTS_SCOPE, agent.id);
  if (stored) {
    await unindexName(deps.state, stored);
    await releaseName(deps.state, stored);
    await unindexAge(deps.state, stored);
  }
  await deleteAgentData(deps.state, agent.id);
  await unindexAgent(deps.state, agent.realmId, agent.id);
}

/** Every agent of the realm, with its data; idempotent, so a failed realm delete can simply be retried. */
export async function purgeRealmAgents(deps: LifecycleDeps, realmId: string): Promise<{ purged: number }> {
  await deps.backfilled();
  const ids = await realmAgentIds(deps.state, realmId);
  for (const id of ids) await removeAgent(deps, { id, realmId });
  await dropRealmCount(deps.state, realmId);
  return { purged: ids.length };
}

/**
 * A page of agents oldest first, all or a realm's, read through the order-of-creation index: a page
 * costs its own agents, not every agent's. The cursor is the last agent's place (an older cursor,
 * written by pageOf with a NUL between time and id, reads the same).
 */
export async function agentsPage(
  deps: LifecycleDeps,
  realmId: string | undefined,
  request: { limit: number; cursor?: string },
): Promise<{ agents: Agent[]; nextCursor: string | null }> {
  await deps.backfilled();
  const after =
    request.cursor === undefined ? undefined : decodeCursor(request.cursor).replace("\u0000", ":");
  const { ids, lastPlace } = await agentIdsPage(deps.state, realmId, { limit: request.limit, after });
  const found = await Promise.all(ids.map((id) => deps.state.get<Agent>(AGENTS_SCOPE, id)));
  const agents = found.filter(
    (agent): agent is Agent => agent !== null && (realmId === undefined || agent.realmId === realmId),
  );
  return { agents, nextCursor: lastPlace === null ? null : encodeCursor(lastPlace) };
}

/**
 * agent::update: the given fields replace the agent's (a new model is resolved through the catalog; a new
 * tool profile without tools brings the profile's tools; `embeddingModel: null` removes it), with
 * compare-and-swap on the agent's record. What changed is published on `agent.lifecycle`.
 */
export async function updateAgent(
  deps: LifecycleDeps,
  agent: Agent,
  input: UpdateAgentInput,
): Promise<Agent> {
  await writableRealm(deps.trigger, agent.realmId);
  const { id, ...changes } = input;
  const { realmId } = agent;
  if (changes.model !== undefined)
    changes.model = await usableModelName(deps.trigger, changes.model, realmId);
  for (const fallback of changes.fallbackModels ?? []) await usableModel(deps.trigger, fallback, realmId);
  if (changes.embeddingModel != null)
    changes.embeddingModel = await usableEmbeddingModel(deps.trigger, changes.embeddingModel, realmId);
  await checkTools(deps.trigger, changes.tools);
  if (changes.toolProfile !== undefined && changes.tools === undefined)
    changes.tools = profilePatterns[changes.toolProfile];
  const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  let before: Agent | undefined;
  const { value } = await casUpdate<Agent>(deps.state, AGENTS_SCOPE, id, ({ value: current }) => {
    if (!current || (current.status as string) === AGENT_DELETING) throw notFound(`Agent ${id} not found`);
    before = current;
    const next = { ...current, ...defined, updatedAt: nowIso() } as Agent;
    // No embedding model of its own is stored as none at all, as an agent created without one.
    if (next.embeddingModel === null) delete next.embeddingModel;
    return next;
  });
  const after = value as Agent;
  publishUpdate(deps.trigger, before as Agent, after);
  return after;
}

function publishUpdate(trigger: TriggerFn, before: Agent, after: Agent): void {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  keys.delete("updatedAt");
  const changed = [...keys].filter(
    (key) =>
      JSON.stringify(before[key as keyof Agent] ?? null) !==
      JSON.stringify(after[key as keyof Agent] ?? null),
  );
  if (changed.length === 0) return;
  const embeddingModel = changed.includes("embeddingModel")
    ? { from: before.embeddingModel ?? null, to: after.embeddingModel ?? null }
    : undefined;
  publish(trigger, {
    type: "updated",
    agentId: after.id,
    realmId: after.realmId,
    changed,
    ...(embeddingModel ? { embeddingModel } : {}),
  });
}
