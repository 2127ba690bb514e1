import type { TriggerFn } from "../../engine/types.ts";
import { type CostAccount, costEvent, recordCost } from "../../llm/cost-event.ts";
import { assertWithinBudget } from "../../llm/guards.ts";
import type { ModelChoice, Usage } from "../../llm/types.ts";
import type { Agent } from "./schema.ts";

/**
 * Whom an agent's turns are charged to: a sub-agent (tool::agent_spawn records its tree's root) spends
 * its root's budget, as it counts against its root's spawn quota. Charged to itself, a sub-agent had no
 * budget at all, so an agent escaped its own by spawning one to do the paid work.
 */
export function payerOf(agent: Pick<Agent, "id" | "realmId" | "metadata">): CostAccount {
  const root = agent.metadata?.spawnRoot;
  return { realmId: agent.realmId, agentId: typeof root === "string" && root ? root : agent.id };
}

/** The ledger's check for the agent before each model call of its turn (see assertWithinBudget). */
export const checkBudget = (deps: { trigger: TriggerFn }, agent: Agent): Promise<void> =>
  assertWithinBudget(deps.trigger, payerOf(agent));

/** Records the cost of one model call of the agent's turn (see recordCost). */
export function recordTurnCost(
  deps: { trigger: TriggerFn },
  agent: Agent,
  sessionId: string | null,
  choice: ModelChoice,
  usage: Usage,
): Promise<void> {
  return recordCost(deps.trigger, costEvent(payerOf(agent), sessionId, choice, usage));
}
