import { call, type OutputOf } from "../engine/call.ts";
import type { TriggerFn } from "../engine/types.ts";
import { AppError, conflict } from "../shared/errors.ts";
import { requireRealm } from "../shared/realm-refs.ts";
import type { CostAccount } from "./cost-event.ts";
import { localProviderClosed } from "./providers.ts";
import type { ProviderEntry } from "./types.ts";

/**
 * Checked before every model call (DESIGN §5), whoever makes it (an agent's turn, a plain completion):
 * a Paused or Archived realm, or one being deleted, takes no activity (409). Fail-safe without a realm
 * worker.
 */
export async function assertRealmOpen(trigger: TriggerFn, realmId: string): Promise<void> {
  const realm = await requireRealm(trigger, realmId);
  if (realm?.status === "Paused") throw conflict(`Realm ${realmId} is paused`);
  if (realm?.status === "Archived") throw conflict(`Realm ${realmId} is archived`);
  if (realm?.deleting) throw conflict(`Realm ${realmId} is being deleted`);
}

/**
 * `ledger::check` for the account must not refuse (402 with the check's reason). Fail-safe (spec): only
 * an explicit "not allowed" stops the call; no ledger, or a failing one, allows. Asked as the caller.
 */
export async function assertWithinBudget(trigger: TriggerFn, account: CostAccount): Promise<void> {
  let verdict: OutputOf<"ledger::check"> | undefined;
  try {
    verdict = await call(trigger, "ledger::check", { ...account });
  } catch {
    return;
  }
  if (verdict?.allowed === false) {
    const reason =
      verdict.reason ??
      `agent ${account.agentId} exceeded budget: ${verdict.spentCents}/${verdict.limitCents}`;
    // The ledger's words (the spec's form) say neither whose budget it is nor the unit: both added.
    if (!verdict.scope) throw new AppError("budget_exceeded", reason);
    const whose =
      verdict.scope === "realm" ? `realm ${account.realmId}'s monthly budget` : "its monthly budget";
    throw new AppError(
      "budget_exceeded",
      `${reason} (US cents spent of ${whose}; raise it with POST /api/ledger/budget)`,
    );
  }
}

/**
 * Both checks before a paid call (DESIGN §5), whoever pays: the account's realm takes activity (409
 * otherwise), then its budget allows (402 otherwise). Fail-safe as each check is.
 */
export async function assertMaySpend(trigger: TriggerFn, account: CostAccount): Promise<void> {
  await assertRealmOpen(trigger, account.realmId);
  await assertWithinBudget(trigger, account);
}

/** The account's realm may use the provider (localProviderClosed): 403 naming what to set otherwise. */
export function assertProviderOpen(provider: ProviderEntry, realmId: string): void {
  const closed = localProviderClosed(provider, realmId);
  if (closed) throw new AppError("forbidden", `Realm ${realmId} may not use this model: ${closed}`);
}
