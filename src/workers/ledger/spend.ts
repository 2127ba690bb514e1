import { publishEventAwaited } from "../../engine/events.ts";
import { casUpdate, isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import {
  budgetKey,
  budgetsScope,
  type Charge,
  charged,
  exceededMessage,
  Refusal,
  refunded,
  utilizationPct,
} from "./budget.ts";
import type { Budget, SpendEvent, SpendInput } from "./schema.ts";
import { claimsScope, spendScope } from "./store.ts";
import { addToTotals } from "./totals.ts";

export interface LedgerDeps {
  trigger: TriggerFn;
  state: StateClient;
}

/**
 * Records one spend (DESIGN §5, §6): counted against the agent's budget and the realm-wide budget,
 * each with compare-and-swap, or refused with 402 when a hard limit would be passed. With an eventId
 * the spend counts once however often it is delivered (every cluster node's subscriber receives
 * each `cost.incurred`).
 */
export async function spend(deps: LedgerDeps, input: SpendInput): Promise<SpendEvent> {
  const now = nowMs();
  const draft = draftEvent(input, now);
  const { eventId } = input;
  if (eventId !== undefined) {
    const earlier = await claim(deps, draft, eventId);
    if (earlier) return replay(deps, earlier);
  }
  const charge: Charge = { spendId: draft.id, costCents: draft.costCents, now, at: draft.timestamp };
  let budgets: Charged[];
  try {
    budgets = await chargeBudgets(deps, draft, charge);
  } catch (error) {
    if (error instanceof Refusal) return refuse(deps, draft, error);
    // Nothing was counted: free the eventId so a retry can count the spend. (After the budgets were
    // charged the claim stays, whatever fails next: counting a cost twice is worse than a gap in totals.)
    if (eventId !== undefined)
      await deps.state.delete(claimsScope(draft.realmId), eventId).catch(() => undefined);
    throw error;
  }
  return settle(deps, draft, budgets);
}

/**
 * Every spend gets a fresh id: an id made from the caller's eventId could equal another spend's (one
 * without an eventId is `spn-<random uuid>`, and a later eventId may be that uuid) and overwrite it.
 * The eventId stays on the event for tracing; a replay finds the id through the claim.
 */
function draftEvent(input: SpendInput, now: number): SpendEvent {
  const { eventId, ...fields } = input;
  return {
    id: newId("spn"),
    ...fields,
    ...(eventId === undefined ? {} : { eventId }),
    timestamp: new Date(now).toISOString(),
    status: "pending",
  };
}

/** A create-only write claims the eventId; the earlier claim (the pending draft) when it was taken. */
async function claim(deps: LedgerDeps, draft: SpendEvent, eventId: string): Promise<SpendEvent | undefined> {
  const scope = claimsScope(draft.realmId);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await deps.state.set(scope, eventId, draft, 0);
      return undefined;
    } catch (error) {
      if (!isConflict(error)) throw error;
      const earlier = await deps.state.get<SpendEvent>(scope, eventId);
      if (earlier) return earlier;
      // The first delivery failed and released its claim in between: claim it again.
    }
  }
  throw new AppError("unavailable", `Spend event ${eventId} is being retried concurrently; try again`);
}

/** A duplicate answers like the first delivery: the stored event, its refusal, or the pending draft. */
async function replay(deps: LedgerDeps, claimed: SpendEvent): Promise<SpendEvent> {
  const stored = await deps.state.get<SpendEvent>(spendScope(claimed.realmId), claimed.id);
  if (stored?.status === "rejected")
    throw new AppError("budget_exceeded", stored.reason ?? "budget exceeded");
  return stored ?? claimed;
}

/** The accepted spend: stored, added to the running totals, soft alerts published. */
async function settle(deps: LedgerDeps, draft: SpendEvent, budgets: Charged[]): Promise<SpendEvent> {
  // A spend without its own billing code is attributed to its budget's (the agent's first).
  const billingCode =
    draft.billingCode ?? budgets.find((entry) => entry.budget?.billingCode)?.budget?.billingCode;
  const event: SpendEvent = { ...draft, ...(billingCode ? { billingCode } : {}), status: "accepted" };
  await Promise.all([
    deps.state.set(spendScope(event.realmId), event.id, event),
    addToTotals(deps.state, event),
  ]);
  for (const { budget, crossedSoft } of budgets) {
    if (budget && crossedSoft) await publishSoftThreshold(deps, event, budget);
  }
  return event;
}

interface Charged {
  budget: Budget | null;
  crossedSoft: boolean;
}

/** Agent budget first, then the realm's; when the realm's refuses, the agent's charge is undone. */
async function chargeBudgets(deps: LedgerDeps, draft: SpendEvent, charge: Charge): Promise<Charged[]> {
  const agentKey = budgetKey(draft.agentId);
  const agent = await chargeOne(deps, draft.realmId, agentKey, charge);
  try {
    return [agent, await chargeOne(deps, draft.realmId, budgetKey(), charge)];
  } catch (error) {
    const period = agent.budget?.periodStart;
    if (period !== undefined) {
      await casUpdate<Budget>(deps.state, budgetsScope(draft.realmId), agentKey, ({ value }) =>
        value ? refunded(value, charge, period, nowIso()) : undefined,
      );
    }
    throw error;
  }
}

async function chargeOne(deps: LedgerDeps, realmId: string, key: string, charge: Charge): Promise<Charged> {
  let crossedSoft = false;
  const written = await casUpdate<Budget>(deps.state, budgetsScope(realmId), key, ({ value }) => {
    // The change runs again after a lost swap: only the attempt that is written decides.
    crossedSoft = false;
    if (!value) return undefined;
    const applied = charged(value, charge);
    crossedSoft = applied.crossedSoft;
    return applied.next;
  });
  return { budget: written.value, crossedSoft };
}

/** Records the refusal (not counted anywhere), tells subscribers and the council, then fails with 402. */
async function refuse(deps: LedgerDeps, draft: SpendEvent, refusal: Refusal): Promise<never> {
  const { realmId, agentId } = draft;
  const limitCents = refusal.budget.monthlyCents;
  const spentCents = refusal.wouldSpend;
  const reason = exceededMessage(agentId, spentCents, limitCents);
  await deps.state.set(spendScope(realmId), draft.id, { ...draft, status: "rejected", reason });
  await publish(deps, { type: "hard_limit_reached", realmId, agentId, spentCents, limitCents });
  // The council worker may be absent (or failing): the refusal stands either way.
  await deps
    .trigger({
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
    })
    .catch(() => undefined);
  throw new AppError("budget_exceeded", reason);
}

function publishSoftThreshold(deps: LedgerDeps, event: SpendEvent, budget: Budget): Promise<void> {
  return publish(deps, {
    type: "soft_threshold",
    realmId: event.realmId,
    agentId: event.agentId,
    spentCents: budget.spentCents,
    limitCents: budget.monthlyCents,
    utilizationPct: utilizationPct(budget.spentCents, budget.monthlyCents),
  });
}

/** Alerts are awaited (delivered before the spend answers) but a failing publish fails no spend. */
async function publish(deps: LedgerDeps, data: Record<string, unknown>): Promise<void> {
  await publishEventAwaited(deps.trigger, "ledger.alert", data);
}
