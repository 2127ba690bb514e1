import { nowIso } from "../shared/clock.ts";
import { newId } from "../shared/ids.ts";
import type { ModelChoice } from "./generate.ts";
import { costOf, type Usage } from "./types.ts";

/** Whom a model call is charged to on the ledger. */
export interface CostAccount {
  realmId: string;
  agentId: string;
}

/**
 * The `cost.incurred` payload of one model call, exactly what ledger::spend takes (the ledger subscribes
 * it as is): cents with fractions (the ledger keeps 6 decimals), and a fresh eventId so a spend is
 * counted once across nodes.
 */
export function costEvent(account: CostAccount, sessionId: string | null, choice: ModelChoice, usage: Usage) {
  const cost = costOf(choice.model, usage);
  return {
    realmId: account.realmId,
    agentId: account.agentId,
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
}
