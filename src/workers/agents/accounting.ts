import { publishEvent } from "../../engine/events.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { costEvent } from "../../llm/cost-event.ts";
import type { ModelChoice } from "../../llm/generate.ts";
import { assertWithinBudget } from "../../llm/guards.ts";
import type { Usage } from "../../llm/types.ts";
import type { Agent } from "./schema.ts";

/** The ledger's check for the agent before each model call of its turn (see assertWithinBudget). */
export const checkBudget = (deps: { trigger: TriggerFn }, agent: Agent): Promise<void> =>
  assertWithinBudget(deps.trigger, { realmId: agent.realmId, agentId: agent.id });

/** Publishes the `cost.incurred` message of one model call of the agent's turn (see costEvent). */
export function publishCost(
  deps: { trigger: TriggerFn },
  agent: Agent,
  sessionId: string | null,
  choice: ModelChoice,
  usage: Usage,
): void {
  const account = { realmId: agent.realmId, agentId: agent.id };
  publishEvent(deps.trigger, "cost.incurred", costEvent(account, sessionId, choice, usage));
}
