import type { TriggerFn } from "../../engine/types.ts";
import type { ModelChoice } from "../../llm/generate.ts";
import { costOf, type Usage } from "../../llm/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
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

/**
 * `cost.incurred` carries exactly what ledger::spend takes (the ledger subscribes it as is): cents with
 * fractions (the ledger keeps 6 decimals), and a fresh eventId so a spend is counted once across nodes.
 */
export function publishCost(
  deps: { trigger: TriggerFn },
  agent: Agent,
  sessionId: string | null,
  choice: ModelChoice,
  usage: Usage,
): void {
  const cost = costOf(choice.model, usage);
  const data = {
    realmId: agent.realmId,
    agentId: agent.id,
    costCents: Math.round(cost * 100 * 1e6) / 1e6,
    provider: choice.provider.id,
    model: choice.model.id,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    eventId: newId(),
    sessionId,
    cost,
    at: nowIso(),
  };
  void deps.trigger({
    function_id: "publish",
    payload: { topic: "cost.incurred", data },
    action: { type: "void" },
  });
}
