import type { Principal, TriggerFn } from "../../engine/types.ts";
import { type CostAccount, costEvent, recordCost } from "../../llm/cost-event.ts";
import { assertRealmOpen, assertWithinBudget } from "../../llm/guards.ts";
import type { ModelChoice, Usage } from "../../llm/types.ts";
import { DEFAULT_REALM_ID } from "../../shared/access.ts";

/**
 * A realm-bound key's completions are its realm's, an admin key's go to the default realm; the key
 * stands in for the agent (`apikey:<keyId>`), so the ledger can tell callers apart.
 */
export function accountOf(auth: Principal): CostAccount {
  const agentId = "keyId" in auth ? `apikey:${auth.keyId}` : "system";
  return { realmId: auth.kind === "realm" ? auth.realmId : DEFAULT_REALM_ID, agentId };
}

/** Records the cost of one completion (no session: a plain completion has none); see recordCost. */
export function recordCompletionCost(
  deps: { trigger: TriggerFn },
  account: CostAccount,
  choice: ModelChoice,
  usage: Usage,
): Promise<void> {
  return recordCost(deps.trigger, costEvent(account, null, choice, usage));
}

/**
 * Runs before a plain completion's model call, as for an agent's (DESIGN §5): the account's realm must
 * take activity (a Paused or Archived realm, or one being deleted, is a 409), and `ledger::check` for
 * the account must not refuse (402 with the check's reason). Fail-safe like the agents' check: without
 * a ledger, or when the check itself fails, the call goes ahead. Asked as the caller, whose key the
 * account belongs to.
 */
export async function checkAccount(deps: { trigger: TriggerFn }, account: CostAccount): Promise<void> {
  await assertRealmOpen(deps.trigger, account.realmId);
  await assertWithinBudget(deps.trigger, account);
}
