import { publishEventAwaited } from "../../engine/events.ts";
import { isConflict } from "../../engine/state/cas.ts";
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
 * Spends of one realm are counted in groups (issue #14): those that arrive while a group is being
 * written wait and go together in the next, which reads the budgets once, charges them in arrival order
 * and writes one transaction. A lone spend is a group of one; a busy realm no longer writes its budget
 * record once per spend, one after the other. Retries only happen across nodes.
 */
export function spend(deps: LedgerDeps, input: SpendInput, pendingKey?: string): Promise<SpendEvent> {
  const realms = queues.get(deps) ?? new Map<string, RealmQueue>();
  queues.set(deps, realms);
  const settled = new Promise<SpendEvent>((resolve, reject) => {
    const waiting: Waiting = { input, pendingKey, resolve, reject };
    const queued = realms.get(input.realmId);
    if (queued) queued.waiting.push(waiting);
    else {
      const queue: RealmQueue = { waiting: [waiting], last: Promise.resolve() };
      realms.set(input.realmId, queue);
      void drain(deps, realms, input.realmId, queue);
    }
  });
  const queue = realms.get(input.realmId) as RealmQueue;
  queue.last = settled.then(
    () => undefined,
    () => undefined,
  );
  return settled;
}

/** Settles once every spend of the realm that this process took before the call is settled. */
export function spendsSettled(deps: LedgerDeps, realmId: string): Promise<void> {
  return queues.get(deps)?.get(realmId)?.last ?? Promise.resolve();
}

/** The same for every realm (a stopping service counts what it took). */
export async function allSpendsSettled(deps: LedgerDeps): Promise<void> {
  await Promise.all([...(queues.get(deps)?.values() ?? [])].map((queue) => queue.last));
}

interface Waiting {
  input: SpendInput;
  /** A queued cost's record in the pending scope: deleted in the transaction that counts it. */
  pendingKey?: string;
  resolve: (event: SpendEvent) => void;
  reject: (error: unknown) => void;
}

interface RealmQueue {
  waiting: Waiting[];
  /** The latest spend's settlement (groups settle in arrival order). */
  last: Promise<void>;
}

/** The spends waiting per realm, per ledger (one process may hold several services, as tests do). */
const queues = new WeakMap<LedgerDeps, Map<string, RealmQueue>>();
const MAX_GROUP = 64;
const MAX_ATTEMPTS = 64;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function drain(deps: LedgerDeps, realms: Map<string, RealmQueue>, realmId: string, queue: RealmQueue) {
  while (queue.waiting.length > 0) {
    const group = queue.waiting.splice(0, MAX_GROUP);
    await settleGroup(deps, group).catch((error: unknown) => {
      for (const waiting of group) waiting.reject(error);
    });
  }
  realms.delete(realmId);
}

async function settleGroup(deps: LedgerDeps, group: Waiting[]): Promise<void> {
  const realmId = group[0]?.input.realmId as string;
  await deps.realm?.before(realmId);
  let outcomes: Outcome[] | undefined;
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS && !outcomes; attempt++) {
      if (attempt > 0) await pause(Math.random() * Math.min(2 ** attempt, 50));
      // First as if no eventId had been seen (the usual case): a claim found taken fails the batch, and
      // the next try reads the claims and answers those spends as they were answered before.
      outcomes = await attemptGroup(deps, group, attempt > 0);
    }
  } finally {
    // Refused spends are recorded too, and a failed try may have raced a delete: the re-check runs either way.
    await deps.realm?.after(realmId);
  }
  if (!outcomes)
    throw new AppError("unavailable", `Too much contention on the budgets of realm ${realmId}; try again`);
  for (const [index, waiting] of group.entries()) {
    const outcome = outcomes[index] as Outcome;
    if ("event" in outcome) waiting.resolve(outcome.event);
    else waiting.reject(outcome.error);
  }
}

type Outcome = { event: SpendEvent } | { error: unknown };
type Versioned<T> = { value: T; version: number } | null;

/** One budget as the group charges it: as read, and as it is after the spends counted so far. */
interface Charging {
  key: string;
  version: number;
  current: Budget;
  changed: boolean;
}

/**
 * One try of a group (spends of one realm, in arrival order): undefined when another writer got in
 * between (the caller reads again and retries); else each spend's outcome, all written in one batch.
 */
async function attemptGroup(
  deps: LedgerDeps,
  group: Waiting[],
  readingClaims: boolean,
): Promise<Outcome[] | undefined> {
  const inputs = group.map((waiting) => waiting.input);
  const now = nowMs();
  const realmId = inputs[0]?.realmId as string;
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
          (event) => event && { event },
          (error) => ({ error }),
        )
      : undefined;
    if (replayed) outcomes[index] = replayed;
    else counted.push(index);
  }
  const budgets = budgetsScope(realmId);
  const charging = await readBudgets(
    deps,
    budgets,
    counted.map((index) => (inputs[index] as SpendInput).agentId),
  );
  // A queued cost leaves the pending scope with its outcome, whichever it is (a replay's too).
  const ops: BatchOp[] = group.flatMap(({ pendingKey }) =>
    pendingKey === undefined ? [] : [{ type: "delete" as const, scope: PENDING_SCOPE, key: pendingKey }],
  );
  const accepted: SpendEvent[] = [];
  const refusals: Array<{ rejected: SpendEvent; refusal: Refusal }> = [];
  const softCrossings: Array<{ event: SpendEvent; budget: Budget }> = [];
  for (const index of counted) {
    const draft = draftEvent(inputs[index] as SpendInput, now);
    const claimVersion = claims[index]?.version;
    const charge: Charge = { spendId: draft.id, costCents: draft.costCents, now, at: draft.timestamp };
    const applied = chargeBoth(charging, draft.agentId, charge);
    if (applied instanceof Refusal) {
      const reason = exceededMessage(draft.agentId, applied.wouldSpend, applied.budget.monthlyCents);
      const rejected: SpendEvent = { ...draft, status: "rejected", reason };
      ops.push(...claimOp(rejected, claimVersion), eventOp(rejected));
      refusals.push({ rejected, refusal: applied });
      outcomes[index] = { error: new AppError("budget_exceeded", reason) };
      continue;
    }
    // A spend without its own billing code is attributed to its budget's (the agent's first).
    const billingCode =
      draft.billingCode ?? applied.find((entry) => entry.next.billingCode)?.next.billingCode;
    const event: SpendEvent = { ...draft, ...(billingCode ? { billingCode } : {}), status: "accepted" };
    ops.push(...claimOp(event, claimVersion), eventOp(event));
    accepted.push(event);
    for (const { next, crossedSoft } of applied) if (crossedSoft) softCrossings.push({ event, budget: next });
    outcomes[index] = { event };
  }
  for (const budget of charging.values()) {
    if (budget.changed)
      ops.push({
        type: "set",
        scope: budgets,
        key: budget.key,
        value: budget.current,
        expectedVersion: budget.version,
      });
  }
  ops.push(...totalsOps(accepted), ...absenceGuards(budgets, charging, accepted));
  if (ops.length > 0 && !(await commit(deps, ops))) return undefined;
  for (const { event, budget } of softCrossings) await publishSoftThreshold(deps, event, budget);
  for (const { rejected, refusal } of refusals) await refuse(deps, rejected, refusal).catch(() => undefined);
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

/** The budgets the group charges: each agent's that has one, and the realm's, read once. */
async function readBudgets(
  deps: LedgerDeps,
  scope: string,
  agentIds: string[],
): Promise<Map<string, Charging>> {
  const keys = [
    ...new Set(agentIds.map((agentId) => budgetKey(agentId))),
    ...(agentIds.length ? [budgetKey()] : []),
  ];
  const read = await Promise.all(keys.map((key) => deps.state.getVersioned<Budget>(scope, key)));
  const charging = new Map<string, Charging>();
  for (const [index, key] of keys.entries()) {
    const found = read[index];
    if (found) charging.set(key, { key, version: found.version, current: found.value, changed: false });
  }
  return charging;
}

/**
 * A spend charged to the agent's budget and the realm's, or the Refusal when either's hard limit would
 * be passed (then neither is charged). Charges build on the spends counted before it in the group.
 */
function chargeBoth(
  charging: Map<string, Charging>,
  agentId: string,
  charge: Charge,
): Array<{ next: Budget; crossedSoft: boolean }> | Refusal {
  const targets = [charging.get(budgetKey(agentId)), charging.get(budgetKey())].filter(
    (entry): entry is Charging => entry !== undefined,
  );
  let applied: Array<{ next: Budget; crossedSoft: boolean }>;
  try {
    applied = targets.map((target) => charged(target.current, charge));
  } catch (error) {
    if (error instanceof Refusal) return error;
    throw error;
  }
  for (const [index, target] of targets.entries()) {
    target.current = (applied[index] as { next: Budget }).next;
    target.changed = true;
  }
  return applied;
}

/**
 * For each budget an accepted spend would have been charged to had it existed: a check, after the
 * totals' increments, that it still does not (a delete of nothing, conditional on version 0). A budget
 * created meanwhile starts from the month's totals as it read them (opening.ts); without this check a
 * spend counted in between would be in neither. Coming after the totals, the check also holds on
 * Postgres: the budget's write locks the same totals record first.
 */
function absenceGuards(scope: string, charging: Map<string, Charging>, accepted: SpendEvent[]): BatchOp[] {
  if (accepted.length === 0) return [];
  const keys = new Set([...accepted.map((event) => budgetKey(event.agentId)), budgetKey()]);
  return [...keys]
    .filter((key) => !charging.has(key))
    .map((key): BatchOp => ({ type: "delete", scope, key, expectedVersion: 0 }));
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

/** Create-only: a spend's id is fresh (see draftEvent), so nothing is read before it is written. */
function eventOp(event: SpendEvent): BatchOp {
  return { type: "set", scope: spendScope(event.realmId), key: event.id, value: event, expectedVersion: 0 };
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

/** The refusal is recorded (not counted anywhere): subscribers and the council are told. */
async function refuse(deps: LedgerDeps, rejected: SpendEvent, refusal: Refusal): Promise<void> {
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
