import { type Principal, systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import { type CostAccount, costEvent } from "../../llm/cost-event.ts";
import type { ModelChoice } from "../../llm/generate.ts";
import type { Usage } from "../../llm/types.ts";

const DEFAULT_REALM = "realm-default";

/**
 * A realm-bound key's completions are its realm's, an admin key's go to the default realm; the key
 * stands in for the agent (`apikey:<keyId>`), so the ledger can tell callers apart.
 */
export function accountOf(auth: Principal): CostAccount {
  const agentId = "keyId" in auth ? `apikey:${auth.keyId}` : "system";
  return { realmId: auth.kind === "realm" ? auth.realmId : DEFAULT_REALM, agentId };
}

/** Publishes the `cost.incurred` message of one completion (no session: a plain completion has none). */
export function publishCost(
  deps: { trigger: TriggerFn },
  account: CostAccount,
  choice: ModelChoice,
  usage: Usage,
): void {
  void deps.trigger({
    function_id: "publish",
    payload: { topic: "cost.incurred", data: costEvent(account, null, choice, usage) },
    action: { type: "void" },
    auth: systemPrincipal,
  });
}
