import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { nowMs } from "../../shared/clock.ts";
import { conflict } from "../../shared/errors.ts";
import type { Agent } from "./schema.ts";

/**
 * Agents by name, so `/v1/chat/completions` finds `model: "<agent name>"` with one keyed read instead of
 * listing every agent. Names are not unique: the key is the name, a separator and the id.
 */
const NAMES_SCOPE = "agent_names";
/** `<realmId>\u0001<name>` → the agent holding that name in the realm: names are unique per realm. */
const CLAIMS_SCOPE = "agent_name_claims";
// Keys cannot hold NUL; U+0001 does not occur in a real name (a name holding it is checked on read).
const SEPARATOR = "\u0001";
const MAX_MATCHES = 100;
const ABANDONED_CLAIM_MS = 60_000;

interface NameEntry {
  agentId: string;
  realmId: string;
}

export async function indexName(
  state: StateClient,
  agent: Pick<Agent, "id" | "name" | "realmId">,
): Promise<void> {
  await state.set<NameEntry>(NAMES_SCOPE, `${agent.name}${SEPARATOR}${agent.id}`, {
    agentId: agent.id,
    realmId: agent.realmId,
  });
}

export async function unindexName(state: StateClient, agent: Pick<Agent, "id" | "name">): Promise<void> {
  await state.delete(NAMES_SCOPE, `${agent.name}${SEPARATOR}${agent.id}`);
}

/** The agents called `name` (at most 100), oldest id first; callers check realm access themselves. */
export async function agentsNamed(state: StateClient, name: string): Promise<NameEntry[]> {
  const prefix = `${name}${SEPARATOR}`;
  const page = await state.list<NameEntry>(NAMES_SCOPE, { prefix, limit: MAX_MATCHES });
  return page.items
    .filter((item) => !item.key.slice(prefix.length).includes(SEPARATOR))
    .map((item) => item.value);
}

/**
 * Takes the agent's name in its realm (create-only, so of two creates racing for one name exactly one
 * wins), or 409 naming the agent that has it. A claim whose agent never appeared or is gone (a create or
 * delete cut short) is taken over after a minute; agents named before claims existed are found through
 * the name index.
 */
export async function claimName(
  state: StateClient,
  agent: Pick<Agent, "id" | "name" | "realmId">,
  exists: (agentId: string) => Promise<boolean>,
): Promise<void> {
  const key = `${agent.realmId}${SEPARATOR}${agent.name}`;
  const holders = (await agentsNamed(state, agent.name)).filter(
    (entry) => entry.realmId === agent.realmId && entry.agentId !== agent.id,
  );
  for (const holder of holders) {
    if (await exists(holder.agentId)) throw nameTaken(agent, holder.agentId);
  }
  const claim = await state.getVersioned<NameEntry>(CLAIMS_SCOPE, key);
  if (claim && claim.value.agentId !== agent.id) {
    // Its agent may still be being written: only a claim left for a minute without one is abandoned.
    const settled = nowMs() - Date.parse(claim.updatedAt) > ABANDONED_CLAIM_MS;
    if (!settled || (await exists(claim.value.agentId))) throw nameTaken(agent, claim.value.agentId);
  }
  try {
    await state.set<NameEntry>(
      CLAIMS_SCOPE,
      key,
      { agentId: agent.id, realmId: agent.realmId },
      claim?.version ?? 0,
    );
  } catch (error) {
    if (!isConflict(error)) throw error;
    const winner = await state.get<NameEntry>(CLAIMS_SCOPE, key);
    throw nameTaken(agent, winner?.agentId ?? "another agent");
  }
}

/** Gives the name back, if this agent still holds it. */
export async function releaseName(
  state: StateClient,
  agent: Pick<Agent, "id" | "name" | "realmId">,
): Promise<void> {
  const key = `${agent.realmId}${SEPARATOR}${agent.name}`;
  const claim = await state.getVersioned<NameEntry>(CLAIMS_SCOPE, key);
  if (claim?.value.agentId !== agent.id) return;
  await state.delete(CLAIMS_SCOPE, key, claim.version).catch((error) => {
    if (!isConflict(error)) throw error;
  });
}

const nameTaken = (agent: Pick<Agent, "name" | "realmId">, holder: string) =>
  conflict(
    `An agent named "${agent.name}" already exists in realm ${agent.realmId} (${holder}): choose another name, or change that agent with PATCH /api/agents/${holder}`,
  );
