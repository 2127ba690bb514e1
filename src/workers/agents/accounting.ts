import type { TriggerFn } from "../../engine/types.ts";
import { costEvent, payerOf, recordCost } from "../../llm/cost-event.ts";
import { assertWithinBudget } from "../../llm/guards.ts";
import type { ModelChoice, Usage } from "../../llm/types.ts";
import type { Agent } from "./schema.ts";

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
