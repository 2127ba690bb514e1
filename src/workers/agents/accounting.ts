import type { TriggerFn } from "../../engine/types.ts";
import { costEvent } from "../../llm/cost-event.ts";
import type { ModelChoice } from "../../llm/generate.ts";
import type { Usage } from "../../llm/types.ts";
import { AppError } from "../../shared/errors.ts";
import type { Agent } from "./schema.ts";

/** Fail-safe: only an explicit "not allowed" from a ledger stops the call; no ledger, or a failing one, allows. */
export async function checkBudget(deps: { trigger: TriggerFn }, agent: Agent): Promise<void> {
  let verdict: { allowed?: boolean; reason?: string; spentCents?: number; limitCents?: number } | undefined;
  try {
    verdict = (await deps.trigger({
      function_id: "ledger::check",
      payload: { agentId: agent.id, realmId: agent.realmId },
    })) as typeof verdict;
  } catch {
    return;
  }
  if (verdict?.allowed === false) {
    throw new AppError(
      "budget_exceeded",
      verdict.reason ?? `agent ${agent.id} exceeded budget: ${verdict.spentCents}/${verdict.limitCents}`,
    );
  }
}

/** Publishes the `cost.incurred` message of one model call of the agent's turn (see costEvent). */
export function publishCost(
  deps: { trigger: TriggerFn },
  agent: Agent,
  sessionId: string | null,
  choice: ModelChoice,
  usage: Usage,
): void {
  const account = { realmId: agent.realmId, agentId: agent.id };
  void deps.trigger({
    function_id: "publish",
    payload: { topic: "cost.incurred", data: costEvent(account, sessionId, choice, usage) },
    action: { type: "void" },
  });
}
