import type { Principal } from "./types.ts";

/**
 * The metadata a function registers to say it acts for the calling agent: its `agentId` input is the
 * agent's own id whenever an agent calls (the engine fills it in from the principal), and names the agent
 * only for other callers (an admin key, a realm key, a workflow).
 */
export const ACTS_FOR_AGENT = { actsFor: "agent" } as const;

export const actsForAgent = (metadata: Record<string, unknown> | undefined): boolean =>
  metadata?.actsFor === ACTS_FOR_AGENT.actsFor;

/**
 * Who an agent's own call runs as: its realm, so neither a tool nor a model steered by what it read can
 * reach past it; the key id names the agent in audit records.
 */
export function agentPrincipal(agent: { id: string; realmId: string }): Principal {
  return { kind: "realm", realmId: agent.realmId, keyId: `agent:${agent.id}`, agentId: agent.id };
}

/** The agent a call acts for, when an agent's own call made it. */
export function actingAgentOf(auth: Principal): string | undefined {
  return auth.kind === "realm" ? auth.agentId : undefined;
}

/**
 * The input of a function that acts for the calling agent: the agent's id where the caller left it out.
 * A caller that names an agent keeps it (the function's own access check holds it to the realm), which is
 * why an agent's turn drops any `agentId` its model wrote before calling (see agents/tools.ts).
 */
export function withActingAgent(payload: unknown, auth: Principal): unknown {
  const agentId = actingAgentOf(auth);
  if (agentId === undefined) return payload;
  if (payload === undefined || payload === null) return { agentId };
  if (typeof payload !== "object" || Array.isArray(payload)) return payload;
  if ((payload as { agentId?: unknown }).agentId !== undefined) return payload;
  return { ...payload, agentId };
}
