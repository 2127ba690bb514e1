import type { StateClient } from "../../engine/state/client.ts";
import type { Agent } from "./schema.ts";

/**
 * Agents by name, so `/v1/chat/completions` finds `model: "<agent name>"` with one keyed read instead of
 * listing every agent. Names are not unique: the key is the name, a separator and the id.
 */
const NAMES_SCOPE = "agent_names";
// Keys cannot hold NUL; U+0001 does not occur in a real name (a name holding it is checked on read).
const SEPARATOR = "\u0001";
const MAX_MATCHES = 100;

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
