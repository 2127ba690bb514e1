import { publishEventAwaited } from "../../engine/events.ts";
import { systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import { utilizationPct } from "./budget.ts";
import type { Refusal } from "./charging.ts";
import type { Budget, SpendEvent } from "./schema.ts";

/** The refusal is recorded (not counted anywhere): subscribers and the council are told. */
export async function announceRefusal(
  trigger: TriggerFn,
  rejected: SpendEvent,
  refusal: Refusal,
): Promise<void> {
  const { realmId, agentId } = rejected;
  const limitCents = refusal.budget.monthlyCents;
  const spentCents = refusal.wouldSpend;
  await publish(trigger, { type: "hard_limit_reached", realmId, agentId, spentCents, limitCents });
  // The council worker may be absent (or failing): the refusal stands either way.
  await trigger({
    function_id: "council::activity",
    payload: {
      realmId,
      actorKind: "system",
      actorId: "ledger",
      action: "budget_exceeded",
      entityType: "agent",
      entityId: agentId,
      details: { spentCents, limitCents },
    },
    auth: systemPrincipal,
    timeout_ms: 10_000,
  }).catch(() => undefined);
}

export function announceSoftThreshold(trigger: TriggerFn, event: SpendEvent, budget: Budget): Promise<void> {
  return publish(trigger, {
    type: "soft_threshold",
    realmId: event.realmId,
    agentId: event.agentId,
    spentCents: budget.spentCents,
    limitCents: budget.monthlyCents,
    utilizationPct: utilizationPct(budget.spentCents, budget.monthlyCents),
  });
}

/** Alerts are awaited (delivered before the spend answers) but a failing publish fails no spend. */
async function publish(trigger: TriggerFn, data: Record<string, unknown>): Promise<void> {
  await publishEventAwaited(trigger, "ledger.alert", data);
}
