import type { StateClient } from "../../engine/state/client.ts";
import { budgetKey, budgetsScope } from "./budget.ts";
import { totalsScope } from "./totals.ts";

/** Spend events of a realm, keyed by spend id; read back only by id (never scanned on a hot path). */
export const spendScope = (realmId: string) => `ledger_spend:${realmId}`;
/**
 * Idempotency claims, keyed by eventId. Per realm so a realm delete removes them with everything
 * else; a realm id is part of every spend, so a redelivered message finds its claim again.
 */
export const claimsScope = (realmId: string) => `ledger_event_ids:${realmId}`;

/**
 * Costs taken by ledger::record_cost and not counted yet, keyed `<realmId>/<eventId>`: one scope for
 * every realm, so a sweep finds them all (see pending.ts).
 */
export const PENDING_SCOPE = "ledger_pending";

const PAGE = 1000;

/**
 * Deletes every ledger record of a realm: budgets, spend events, totals, idempotency claims.
 * Idempotent: each scope is emptied page by page until a listing comes back empty.
 */
export async function purgeRealm(state: StateClient, realmId: string): Promise<number> {
  let deleted = 0;
  const scopes = [budgetsScope, spendScope, totalsScope, claimsScope].map((scope) => scope(realmId));
  for (const scope of scopes) {
    for (;;) {
      // Always the first page: the keys just deleted are gone, so no cursor is needed.
      const { items } = await state.list(scope, { limit: PAGE });
      if (items.length === 0) break;
      await Promise.all(items.map((item) => state.delete(scope, item.key)));
      deleted += items.length;
    }
  }
  return deleted;
}

/**
 * Deletes an agent's budget (the agent is being deleted). Its spend events and the running totals are
 * history and stay; the realm-wide budget keeps counting what the agent spent. Idempotent.
 */
export async function purgeAgent(state: StateClient, realmId: string, agentId: string): Promise<number> {
  return (await state.delete(budgetsScope(realmId), budgetKey(agentId))) === null ? 0 : 1;
}
