import type { TriggerFn } from "../../engine/types.ts";
import { type CostAccount, costEvent, recordCost } from "../../llm/cost-event.ts";
import type { ModelChoice, Usage } from "../../llm/types.ts";

/** Records the cost of one completion (no session: a plain completion has none); see recordCost. */
export function recordCompletionCost(
  deps: { trigger: TriggerFn },
  account: CostAccount,
  choice: ModelChoice,
  usage: Usage,
): Promise<void> {
  return recordCost(deps.trigger, costEvent(account, null, choice, usage));
}
