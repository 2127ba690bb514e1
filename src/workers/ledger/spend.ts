import { publishEventAwaited } from "../../engine/events.ts";
import { isConflict, serialized } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import { systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import { nowMs } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import {
  budgetKey,
  budgetsScope,
  type Charge,
  charged,
  exceededMessage,
  Refusal,
  utilizationPct,
} from "./budget.ts";
import type { Budget, SpendEvent, SpendInput } from "./schema.ts";
import { claimsScope, spendScope } from "./store.ts";
import { totalsOps } from "./totals.ts";

export interface LedgerDeps {
  trigger: TriggerFn;
  state: StateClient;
}

/**
 * Records one spend (DESIGN §5, §6): counted against the agent's budget and the realm-wide budget, or
 * refused with 402 when a hard limit would be passed. The outcome is one state transaction: the eventId
 * claim, both budgets (each conditional on the version read, so no update is lost), the event and the
 * running totals are written together or not at all, so a crash can never leave a spend half counted,
 * and a redelivered eventId (every cluster node's subscriber receives each `cost.incurred`) finds the
 * whole outcome or nothing.
 */
export async function spend(deps: LedgerDeps, input: SpendInput): Promise<SpendEvent> {
  // Spends of one realm queue in this process (they swap the same realm budget): retries only across nodes.
  return serialized(`ledger-spend\u0000${input.realmId}`, async () => {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const outcome = await attemptSpend(deps, input);
      if (outcome) return outcome;
      await pause(Math.random() * Math.min(2 ** attempt, 50));
    }
    throw new AppError(
      "unavailable",
      `Too much contention on the budgets of realm ${input.realmId}; try again`,
    );
  });
}

const MAX_ATTEMPTS = 64;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One try: undefined when another writer got in between (the caller reads again and retries). */
async function attemptSpend(deps: LedgerDeps, input: SpendInput): Promise<SpendEvent | undefined> {
  const now = nowMs();
  const draft = draftEvent(input, now);
  const { realmId, agentId } = draft;
  const { eventId } = input;
  const claim =
    eventId === undefined ? null : await deps.state.getVersioned<SpendEvent>(claimsScope(realmId), eventId);
  if (claim) {
    const earlier = await replay(deps, claim.value);
    if (earlier) return earlier;
  }
  const budgets = budgetsScope(realmId);
  const [agent, realm] = await Promise.all([
    deps.state.getVersioned<Budget>(budgets, budgetKey(agentId)),
    deps.state.getVersioned<Budget>(budgets, budgetKey()),
  ]);
  const charge: Charge = { spendId: draft.id, costCents: draft.costCents, now, at: draft.timestamp };
  let applied: Array<{ key: string; version: number; next: Budget; crossedSoft: boolean }>;
  try {
    applied = [
      ...(agent
        ? [{ key: budgetKey(agentId), version: agent.version, ...charged(agent.value, charge) }]
        : []),
      ...(realm ? [{ key: budgetKey(), version: realm.version, ...charged(realm.value, charge) }] : []),
    ];
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    const reason = exceededMessage(agentId, error.wouldSpend, error.budget.monthlyCents);
    const rejected: SpendEvent = { ...draft, status: "rejected", reason };
    if (!(await commit(deps, [...claimOp(rejected, claim?.version), eventOp(rejected)]))) return undefined;
    return refuse(deps, rejected, error);
  }
  // A spend without its own billing code is attributed to its budget's (the agent's first).
  const billingCode = draft.billingCode ?? applied.find((entry) => entry.next.billingCode)?.next.billingCode;
  const event: SpendEvent = { ...draft, ...(billingCode ? { billingCode } : {}), status: "accepted" };
  const budgetOps: BatchOp[] = applied.map(({ key, version, next }) => ({
    type: "set",
    scope: budgets,
    key,
    value: next,
    expectedVersion: version,
  }));
  const ops = [...claimOp(event, claim?.version), ...budgetOps, eventOp(event), ...totalsOps(event)];
  if (!(await commit(deps, ops))) return undefined;
  for (const { next, crossedSoft } of applied) {
    if (crossedSoft) await publishSoftThreshold(deps, event, next);
  }
  return event;
}

/** The batch, or false when a version it was conditional on moved (someone else wrote first). */
async function commit(deps: LedgerDeps, ops: BatchOp[]): Promise<boolean> {
  try {
    await deps.state.batch(ops);
    return true;
  } catch (error) {
    if (isConflict(error)) return false;
    throw error;
  }
}

/** The eventId's claim holds the outcome; create-only, or replacing a claim left pending by an older version. */
function claimOp(event: SpendEvent, pendingVersion: number | undefined): BatchOp[] {
  if (event.eventId === undefined) return [];
  return [
    {
      type: "set",
      scope: claimsScope(event.realmId),
      key: event.eventId,
      value: event,
      expectedVersion: pendingVersion ?? 0,
    },
  ];
}

function eventOp(event: SpendEvent): BatchOp {
  return { type: "set", scope: spendScope(event.realmId), key: event.id, value: event };
}

/**
 * Every spend gets a fresh id: an id made from the caller's eventId could equal another spend's (one
 * without an eventId is `spn-<random uuid>`, and a later eventId may be that uuid) and overwrite it.
 * The eventId stays on the event for tracing; a replay finds the outcome through the claim.
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

/**
 * A duplicate answers like the first delivery: the accepted event, or the same 402. A claim still
 * `pending` was left by a version of the ledger that claimed before it charged, interrupted by a crash:
 * its charge never completed as one outcome, so it is counted now (undefined: go on and count it).
 */
async function replay(deps: LedgerDeps, claimed: SpendEvent): Promise<SpendEvent | undefined> {
  if (claimed.status === "pending") {
    const stored = await deps.state.get<SpendEvent>(spendScope(claimed.realmId), claimed.id);
    if (!stored) return undefined;
    claimed = stored;
  }
  if (claimed.status === "rejected")
    throw new AppError("budget_exceeded", claimed.reason ?? "budget exceeded");
  return claimed;
}

/** The refusal is recorded (not counted anywhere): tell subscribers and the council, then fail with 402. */
async function refuse(deps: LedgerDeps, rejected: SpendEvent, refusal: Refusal): Promise<never> {
  const { realmId, agentId } = rejected;
  const limitCents = refusal.budget.monthlyCents;
  const spentCents = refusal.wouldSpend;
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
  throw new AppError("budget_exceeded", rejected.reason ?? "budget exceeded");
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
