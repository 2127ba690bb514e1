import { casUpdate, isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { encodeCursor } from "../../engine/state/keys.ts";
import { nowIso } from "../../shared/clock.ts";
import { conflict } from "../../shared/errors.ts";
import { onceUntilDone } from "../../shared/once.ts";
import { indexName } from "./name-index.ts";
import type { Agent } from "./schema.ts";
import { AGENTS_SCOPE } from "./store.ts";

/**
 * Per realm, the ids of its agents (so listing, exporting or purging a realm reads only its own agents,
 * never the whole agent table) and a running count (the one record a create changes by compare-and-swap,
 * which makes the realm's maxAgents hold under concurrency, on one node or many).
 */
const indexScope = (realmId: string) => `agent_realm_index:${realmId}`;
/**
 * Agents oldest first, all and per realm, keyed by their place in that order: a page of agents is one
 * ranged read of its entries and a read of each of its agents, however many agents there are.
 */
const AGE_SCOPE = "agents_by_age";
const realmAgeScope = (realmId: string) => `agents_by_age:${realmId}`;
const COUNTS_SCOPE = "agent_realm_counts";
const META_SCOPE = "agents_meta";
// v2 also indexes names (agents by name for /v1), v3 the order of creation: a store backfilled as an
// earlier version runs it again, idempotently.
const BACKFILL_MARKER = "realm_index_v3";

interface IndexEntry {
  agentId: string;
  createdAt: string;
}
interface AgentCount {
  count: number;
}

/** Takes one of the realm's agent slots, or refuses with 409 when all `maxAgents` are taken. */
export async function reserveSlot(state: StateClient, realmId: string, maxAgents?: number): Promise<void> {
  await casUpdate<AgentCount>(state, COUNTS_SCOPE, realmId, ({ value }) => {
    const count = value?.count ?? 0;
    if (maxAgents !== undefined && count >= maxAgents) {
      throw conflict(`Realm ${realmId} has reached its limit of ${maxAgents} agents`);
    }
    return { count: count + 1 };
  });
}

export async function releaseSlot(state: StateClient, realmId: string): Promise<void> {
  await casUpdate<AgentCount>(state, COUNTS_SCOPE, realmId, ({ value }) =>
    value ? { count: Math.max(0, value.count - 1) } : undefined,
  );
}

/** An agent's place oldest first, as a key: its creation time (fixed width), then its id. */
export const ageKey = (agent: Pick<Agent, "id" | "createdAt">) =>
  `${String(Date.parse(agent.createdAt)).padStart(13, "0")}:${agent.id}`;

export async function indexAgent(state: StateClient, agent: Pick<Agent, "id" | "realmId" | "createdAt">) {
  const entry: IndexEntry = { agentId: agent.id, createdAt: agent.createdAt };
  await state.batch([
    { type: "set", scope: indexScope(agent.realmId), key: agent.id, value: entry },
    { type: "set", scope: AGE_SCOPE, key: ageKey(agent), value: entry },
    { type: "set", scope: realmAgeScope(agent.realmId), key: ageKey(agent), value: entry },
  ]);
}

/** The agent's places in the order of creation (when its record, which holds the time, is still known). */
export async function unindexAge(state: StateClient, agent: Pick<Agent, "id" | "realmId" | "createdAt">) {
  await state.batch([
    { type: "delete", scope: AGE_SCOPE, key: ageKey(agent) },
    { type: "delete", scope: realmAgeScope(agent.realmId), key: ageKey(agent) },
  ]);
}

/**
 * One page of agents oldest first, all of them or a realm's, from `after` (an agent's place, exclusive):
 * the ids in order and the place of the last one when more follow. An entry may name an agent being
 * created or already gone: the caller reads the agents and skips the missing.
 */
export async function agentIdsPage(
  state: StateClient,
  realmId: string | undefined,
  page: { limit: number; after?: string },
): Promise<{ ids: string[]; lastPlace: string | null }> {
  const listed = await state.list<IndexEntry>(realmId === undefined ? AGE_SCOPE : realmAgeScope(realmId), {
    limit: page.limit,
    ...(page.after === undefined ? {} : { cursor: encodeCursor(page.after) }),
  });
  const last = listed.items[listed.items.length - 1];
  return {
    ids: listed.items.map((item) => item.value.agentId),
    lastPlace: listed.nextCursor && last ? last.key : null,
  };
}

/**
 * Drops the agent from its realm's index and gives its slot back. Only the caller that actually removed
 * the entry releases the slot, so a delete racing a realm purge counts the agent out once.
 */
export async function unindexAgent(state: StateClient, realmId: string, agentId: string): Promise<void> {
  const removed = await state.delete(indexScope(realmId), agentId);
  if (removed !== null) await releaseSlot(state, realmId);
}

/** Undoes a create that failed half-way: its entry, if written, and the slot it took. */
export async function abandonSlot(state: StateClient, realmId: string, agentId: string): Promise<void> {
  await state.delete(indexScope(realmId), agentId);
  await releaseSlot(state, realmId);
}

export async function realmAgentIds(state: StateClient, realmId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const record of state.scan<IndexEntry>(indexScope(realmId))) ids.push(record.key);
  return ids;
}

/** Forgets the realm's count once its agents are gone (the realm itself is being deleted). */
export async function dropRealmCount(state: StateClient, realmId: string): Promise<void> {
  await state.delete(COUNTS_SCOPE, realmId);
}

/**
 * Agents created before the index existed, indexed and counted once (a marker records it). Index
 * entries are idempotent writes; counts are create-only, so when several nodes start together the first
 * complete count stands and a later, staler one cannot overwrite counts already moved by creates.
 */
export async function backfillRealmIndex(state: StateClient): Promise<void> {
  if (await state.get(META_SCOPE, BACKFILL_MARKER)) return;
  const counts = new Map<string, number>();
  for await (const { value: agent } of state.scan<Agent>(AGENTS_SCOPE)) {
    await indexAgent(state, agent);
    await indexName(state, agent);
    counts.set(agent.realmId, (counts.get(agent.realmId) ?? 0) + 1);
  }
  for (const [realmId, count] of counts) {
    await state.set<AgentCount>(COUNTS_SCOPE, realmId, { count }, 0).catch((error) => {
      if (!isConflict(error)) throw error;
    });
  }
  await state.set(META_SCOPE, BACKFILL_MARKER, { doneAt: nowIso() });
}

/** The backfill, run once and awaited by whatever reads the index; a failed run is tried again. */
export function onceBackfilled(state: StateClient): () => Promise<void> {
  return onceUntilDone(() => backfillRealmIndex(state));
}
