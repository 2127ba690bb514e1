import { call } from "../../engine/call.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import { isAppError, notFound } from "../../shared/errors.ts";

/** Which agent each declared file made: keys `<realm>\u0001<name>`, so a reload finds the same agent. */
export const DECLARED_SCOPE = "config_agents";

export interface DeclaredAgent {
  agentId: string;
  hash: string;
  file: string;
}

export const declaredKey = (realmId: string, name: string) => `${realmId}\u0001${name}`;

/**
 * The agent named `name` in `realmId`, whatever made it (a file of agents/, the API, a migration), or
 * undefined. Asked as the realm, so another realm's agent of that name is never taken; the answer is
 * checked, since agent::resolve also matches an id.
 */
export async function agentByName(
  trigger: TriggerFn,
  realmId: string,
  name: string,
): Promise<string | undefined> {
  const found = await call(
    trigger,
    "agent::resolve",
    { model: name },
    { auth: { kind: "realm", realmId, keyId: "config:resolve" } },
  ).catch((error: unknown) => {
    if (isAppError(error) && error.status === 404) return null;
    throw error;
  });
  if (!found) return undefined;
  const agent = await call(trigger, "agent::get", { id: found.agentId }, { auth: systemPrincipal }).catch(
    () => null,
  );
  return agent?.name === name && agent.realmId === realmId ? found.agentId : undefined;
}

/**
 * The id of the agent a file names (a channel's, a hand's, a workflow step's `agent`): the one a file of
 * agents/ declared, else any agent of that name in the realm; 404 naming both places when there is none.
 */
export async function resolveAgentId(
  state: StateClient,
  trigger: TriggerFn,
  realmId: string,
  name: string,
  justApplied?: Map<string, string>,
): Promise<string> {
  const key = declaredKey(realmId, name);
  const declared = justApplied?.get(key) ?? (await state.get<DeclaredAgent>(DECLARED_SCOPE, key))?.agentId;
  const id = declared ?? (await agentByName(trigger, realmId, name));
  if (!id) {
    throw notFound(
      `no agent ${name} is declared in agents/ (realm ${realmId}) or made over the API in that realm`,
    );
  }
  return id;
}
