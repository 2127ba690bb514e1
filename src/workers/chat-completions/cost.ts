import { type Principal, systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import type { ModelChoice } from "../../llm/generate.ts";
import { costOf, type Usage } from "../../llm/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { newId } from "../../shared/ids.ts";

const DEFAULT_REALM = "realm-default";

/** Whom a plain completion (no agent) is charged to on the ledger. */
export interface CostAccount {
  realmId: string;
  agentId: string;
}

/**
 * A realm-bound key's completions are its realm's, an admin key's go to the default realm; the key
 * stands in for the agent (`apikey:<keyId>`), so the ledger can tell callers apart.
 */
export function accountOf(auth: Principal): CostAccount {
  const agentId = "keyId" in auth ? `apikey:${auth.keyId}` : "system";
  return { realmId: auth.kind === "realm" ? auth.realmId : DEFAULT_REALM, agentId };
}

/**
 * The same `cost.incurred` payload as an agent's turn publishes, which ledger::spend takes as is: cents
 * with fractions (the ledger keeps 6 decimals) and a fresh eventId, so a spend counts once across nodes.
 */
export function publishCost(
  deps: { trigger: TriggerFn },
  account: CostAccount,
  choice: ModelChoice,
  usage: Usage,
): void {
  const cost = costOf(choice.model, usage);
  const data = {
    ...account,
    costCents: Math.round(cost * 100 * 1e6) / 1e6,
    provider: choice.provider.id,
    model: choice.model.id,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    eventId: newId(),
    sessionId: null,
    cost,
    at: nowIso(),
  };
  void deps.trigger({
    function_id: "publish",
    payload: { topic: "cost.incurred", data },
    action: { type: "void" },
    auth: systemPrincipal,
  });
}
