import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { nowMs } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import { announceRefusal, announceSoftThreshold } from "./alerts.ts";
import { budgetKey, budgetsScope, exceededMessage } from "./budget.ts";
import { type ChargeOutcome, chargeSpends, type Refusal } from "./charging.ts";
import { GroupCommitQueue, type Settlement } from "./group-commit.ts";
import type { Budget, SpendEvent, SpendInput } from "./schema.ts";
import { absenceGuards, claimOp, draftEvent, eventOp } from "./spend-records.ts";
import { claimsScope, PENDING_SCOPE, spendScope } from "./store.ts";
import { totalsOps } from "./totals.ts";

export interface LedgerDeps {
  trigger: TriggerFn;
  state: StateClient;
  /** The realm's checks around each group of spends: before (it may take spends), after (a delete raced). */
  realm?: { before(realmId: string): Promise<void>; after(realmId: string): Promise<void> };
}

/**
 * Records one spend (DESIGN §5, §6): counted against the agent's budget and the realm-wide budget, or
 * refused with 402 when a hard limit would be passed. The outcome is one state transaction: the eventId
 * claim, both budgets (each conditional on the version read, so no update is lost), the event and the
 * running totals are written together or not at all, so a crash can never leave a spend half counted,
 * and a redelivered eventId (every cluster node's subscriber receives each `cost.incurred`) finds the
 * whole outcome or nothing.
 *
 * Spends of one realm are counted in groups (issue #14, group-commit.ts): those that arrive while a group is being
 * written wait and go together in the next, which reads the budgets once, charges them in arrival order
 * and writes one transaction. A lone spend is a group of one; a busy realm no longer writes its budget
 * record once per spend, one after the other. Retries only happen across nodes.
 */
export function spend(deps: LedgerDeps, input: SpendInput, pendingKey?: string): Promise<SpendEvent> {
  return spendQueue(deps).enqueue(input.realmId, { input, pendingKey });
}

/**
 * Spends queued costs together: each realm's go into one group when the realm is idle (one by one, the
 * first would commit alone and the rest in a second transaction). Each with its own outcome.
 */
export function spendMany<S extends QueuedSpend>(
  deps: LedgerDeps,
  spends: S[],
): Array<{ queued: S; spent: Promise<SpendEvent> }> {
  const queue = spendQueue(deps);
  return [...Map.groupBy(spends, (queued) => queued.input.realmId)].flatMap(([realmId, group]) => {
    const promises = queue.enqueueMany(realmId, group);
    return group.map((queued, at) => ({ queued, spent: promises[at] as Promise<SpendEvent> }));
  });
}

/** Settles once every spend of the realm that this process took before the call is settled. */
export function spendsSettled(deps: LedgerDeps, realmId: string): Promise<void> {
  return queues.get(deps)?.settled(realmId) ?? Promise.resolve();
}

/** The same for every realm (a stopping service counts what it took). */
export async function allSpendsSettled(deps: LedgerDeps): Promise<void> {
  await queues.get(deps)?.allSettled();
}

type Outcome = Settlement<SpendEvent>;

export interface QueuedSpend {
  input: SpendInput;
  /** A queued cost's record in the pending scope: deleted in the transaction that counts it. */
  pendingKey?: string;
}

/** The spends waiting per realm, per ledger (one process may hold several services, as tests do). */
const queues = new WeakMap<LedgerDeps, GroupCommitQueue<QueuedSpend, SpendEvent>>();
const MAX_GROUP = 64;
const MAX_ATTEMPTS = 64;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function spendQueue(deps: LedgerDeps): GroupCommitQueue<QueuedSpend, SpendEvent> {
  let queue = queues.get(deps);
  if (!queue) {
    queue = new GroupCommitQueue({
      maxGroup: MAX_GROUP,
      commit: (realmId, group) => settleGroup(deps, realmId, group),
    });
    queues.set(deps, queue);
  }
  return queue;
}

async function settleGroup(deps: LedgerDeps, realmId: string, group: QueuedSpend[]): Promise<Outcome[]> {
  await deps.realm?.before(realmId);
  let outcomes: Outcome[] | undefined;
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS && !outcomes; attempt++) {
      if (attempt > 0) await pause(Math.random() * Math.min(2 ** attempt, 50));
      // First as if no eventId had been seen (the usual case): a claim found taken fails the batch, and
      // the next try reads the claims and answers those spends as they were answered before.
      outcomes = await attemptGroup(deps, realmId, group, attempt > 0);
    }
  } finally {
    // Refused spends are recorded too, and a failed try may have raced a delete: the re-check runs either way.
    await deps.realm?.after(realmId);
  }
  if (!outcomes)
    throw new AppError("unavailable", `Too much contention on the budgets of realm ${realmId}; try again`);
  return outcomes;
}

type Versioned<T> = { value: T; version: number } | null;

/**
 * One try of a group (spends of one realm, in arrival order): undefined when another writer got in
 * between (the caller reads again and retries); else each spend's outcome, all written in one batch.
 */
async function attemptGroup(
  deps: LedgerDeps,
  realmId: string,
  group: QueuedSpend[],
  readingClaims: boolean,
): Promise<Outcome[] | undefined> {
  const inputs = group.map((queued) => queued.input);
  const now = nowMs();
  const claims = readingClaims ? await readClaims(deps, realmId, inputs) : inputs.map(() => null);
  const outcomes: Array<Outcome | undefined> = [];
  const counted: number[] = [];
  const firstOfEvent = new Map<string, number>();
  for (const [index, input] of inputs.entries()) {
    const earlier = input.eventId === undefined ? undefined : firstOfEvent.get(input.eventId);
    if (earlier !== undefined) continue; // the same eventId twice in one group: the first one's outcome
    if (input.eventId !== undefined) firstOfEvent.set(input.eventId, index);
    const claim = claims[index];
    const replayed = claim
      ? await replay(deps, claim.value).then(
          (event) => event && { value: event },
          (error) => ({ error }),
        )
      : undefined;
    if (replayed) outcomes[index] = replayed;
    else counted.push(index);
  }
  const budgets = budgetsScope(realmId);
  const read = await readBudgets(
    deps,
    budgets,
    counted.map((index) => (inputs[index] as SpendInput).agentId),
  );
  const drafts = counted.map((index) => draftEvent(inputs[index] as SpendInput, now));
  const charged = chargeSpends(
    new Map([...read].map(([key, { value }]) => [key, value])),
    drafts.map((draft, position) => ({
      agentId: draft.agentId,
      ...(draft.billingCode === undefined ? {} : { billingCode: draft.billingCode }),
      charge: {
        spendId: draft.id,
        costCents: draft.costCents,
        now,
        at: draft.timestamp,
        // A queued cost (ledger::record_cost, cost.incurred) was incurred already: it is always counted.
        incurred: group[counted[position] as number]?.pendingKey !== undefined,
      },
    })),
  );
  // A queued cost leaves the pending scope with its outcome, whichever it is (a replay's too).
  const ops: BatchOp[] = group.flatMap(({ pendingKey }) =>
    pendingKey === undefined ? [] : [{ type: "delete" as const, scope: PENDING_SCOPE, key: pendingKey }],
  );
  const accepted: SpendEvent[] = [];
  const refusals: Array<{ rejected: SpendEvent; refusal: Refusal }> = [];
  const softCrossings: Array<{ event: SpendEvent; budget: Budget }> = [];
  const hardCrossings: Array<{ event: SpendEvent; refusal: Refusal }> = [];
  for (const [position, index] of counted.entries()) {
    const draft = drafts[position] as SpendEvent;
    const charge = charged.outcomes[position] as ChargeOutcome;
    const claimVersion = claims[index]?.version;
    if (!charge.accepted) {
      const { refusal } = charge;
      const reason = exceededMessage(draft.agentId, refusal.wouldSpend, refusal.budget.monthlyCents);
      const rejected: SpendEvent = { ...draft, status: "rejected", reason };
      ops.push(...claimOp(rejected, claimVersion), eventOp(rejected));
      refusals.push({ rejected, refusal });
      outcomes[index] = { error: new AppError("budget_exceeded", reason) };
      continue;
    }
    const { billingCode } = charge;
    const event: SpendEvent = { ...draft, ...(billingCode ? { billingCode } : {}), status: "accepted" };
    ops.push(...claimOp(event, claimVersion), eventOp(event));
    accepted.push(event);
    for (const budget of charge.crossedSoft) softCrossings.push({ event, budget });
    for (const refusal of charge.passedHard) hardCrossings.push({ event, refusal });
    outcomes[index] = { value: event };
  }
  // In the order read: every group writes the budgets of a realm in the same order.
  for (const [key, { version }] of read) {
    if (charged.changed.has(key))
      ops.push({
        type: "set",
        scope: budgets,
        key,
        value: charged.budgets.get(key),
        expectedVersion: version,
      });
  }
  ops.push(...totalsOps(accepted), ...absenceGuards(budgets, read, accepted));
  if (ops.length > 0 && !(await commit(deps, ops))) return undefined;
  for (const { event, budget } of softCrossings) await announceSoftThreshold(deps.trigger, event, budget);
  for (const { rejected, refusal } of refusals)
    await announceRefusal(deps.trigger, rejected, refusal).catch(() => undefined);
  for (const { event, refusal } of hardCrossings)
    await announceRefusal(deps.trigger, event, refusal).catch(() => undefined);
  return inputs.map((input, index) => {
    const own = outcomes[index];
    if (own) return own;
    return outcomes[firstOfEvent.get(input.eventId as string) as number] as Outcome;
  });
}

/** The eventId claims of the group's spends, read together (null: never claimed). */
function readClaims(
  deps: LedgerDeps,
  realmId: string,
  inputs: SpendInput[],
): Promise<Array<Versioned<SpendEvent>>> {
  return Promise.all(
    inputs.map((input) =>
      input.eventId === undefined
        ? null
        : deps.state.getVersioned<SpendEvent>(claimsScope(realmId), input.eventId),
    ),
  );
}

/** The budgets the group charges, with the versions read: each agent's that has one, and the realm's. */
async function readBudgets(
  deps: LedgerDeps,
  scope: string,
  agentIds: string[],
): Promise<Map<string, { value: Budget; version: number }>> {
  const keys = [
    ...new Set(agentIds.map((agentId) => budgetKey(agentId))),
    ...(agentIds.length ? [budgetKey()] : []),
  ];
  const read = await Promise.all(keys.map((key) => deps.state.getVersioned<Budget>(scope, key)));
  const found = new Map<string, { value: Budget; version: number }>();
  for (const [index, key] of keys.entries()) {
    const versioned = read[index];
    if (versioned) found.set(key, versioned);
  }
  return found;
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
