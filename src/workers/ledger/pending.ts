import { isConflict } from "../../engine/state/cas.ts";
import { nowMs } from "../../shared/clock.ts";
import { isAppError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { type SpendInput, spendInput } from "./schema.ts";
import { type LedgerDeps, spendMany } from "./spend.ts";
import { PENDING_SCOPE } from "./store.ts";

/**
 * Model-call costs are taken in two steps (issue #14): `ledger::record_cost` writes the cost to the
 * pending scope (one create-only record, part of the caller's commit) and answers; the spend is then
 * counted in this process's next group of the realm (spend.ts), whose transaction deletes the pending
 * record. An answered model call therefore waits for one small write instead of the whole spend, and a
 * crash between the two steps loses nothing: the records left pending are counted at the next start,
 * and by any node's sweep once they are older than STALE_MS (a cluster node that died). Counting twice
 * is impossible: every queued cost has an eventId, whose claim the spend's transaction takes.
 */
interface PendingCost {
  input: SpendInput;
  queuedAt: number;
}

/** A pending cost this old was left by a process that died, or whose count failed: anyone counts it. */
const STALE_MS = 10_000;
const PAGE = 256;

/** Keys of the pending costs this process is counting now (a sweep leaves them alone). */
const counting = new WeakMap<LedgerDeps, Set<string>>();

/**
 * Costs taken within this long are counted together: one spend transaction (budgets, totals, commit)
 * for all of them instead of one each, which is most of a lone completion's storage work.
 */
const GATHER_MS = 5;
const gathering = new WeakMap<
  LedgerDeps,
  { costs: Array<{ key: string; input: SpendInput }>; timer: NodeJS.Timeout }
>();

export interface QueuedCost {
  eventId: string;
  status: "queued";
}

/** Takes a cost for counting: durable once this resolves; counted moments later (see above). */
export async function queueCost(deps: LedgerDeps, cost: SpendInput): Promise<QueuedCost> {
  const input = { ...cost, eventId: cost.eventId ?? newId() };
  const key = pendingKey(input);
  try {
    await deps.state.set<PendingCost>(PENDING_SCOPE, key, { input, queuedAt: nowMs() }, 0);
  } catch (error) {
    // Taken already (a redelivered message): whoever took it counts it.
    if (!isConflict(error)) throw error;
    return { eventId: input.eventId, status: "queued" };
  }
  count(deps, key, input);
  return { eventId: input.eventId, status: "queued" };
}

/**
 * Counts the pending costs of dead processes and failed counts: every one at a start (`all`), else
 * those older than STALE_MS. Answers how many it took up.
 */
export async function sweepPending(deps: LedgerDeps, all: boolean): Promise<number> {
  const before = nowMs() - STALE_MS;
  let taken = 0;
  let cursor: string | undefined;
  do {
    const page = await deps.state.list<PendingCost>(PENDING_SCOPE, { limit: PAGE, cursor });
    for (const { key, value } of page.items) {
      if (!all && !(value?.queuedAt < before)) continue;
      const parsed = spendInput.safeParse(value?.input);
      // Not a cost this ledger could ever count: dropped rather than tried forever.
      if (!parsed.success || parsed.data.eventId === undefined) await deps.state.delete(PENDING_SCOPE, key);
      else if (count(deps, key, parsed.data)) taken++;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return taken;
}

/** Unique per realm and event: the same eventId in two realms is two costs (claims are per realm). */
function pendingKey(input: SpendInput): string {
  return `${input.realmId}/${input.eventId}`;
}

/**
 * Counts one pending cost in this process's next group of its realm. A refusal (402) is an outcome the
 * spend records; a cost the ledger can never take (its realm gone or being deleted) is dropped; any
 * other failure leaves the record for a later sweep. False when it is being counted already.
 */
function count(deps: LedgerDeps, key: string, input: SpendInput): boolean {
  const mine = counting.get(deps) ?? new Set<string>();
  counting.set(deps, mine);
  if (mine.has(key)) return false;
  mine.add(key);
  const gathered = gathering.get(deps);
  if (gathered) gathered.costs.push({ key, input });
  else {
    const timer = setTimeout(() => countGathered(deps), GATHER_MS);
    gathering.set(deps, { costs: [{ key, input }], timer });
  }
  return true;
}

/** Hands the gathered costs to the spend groups now (a budget check or a summary wants them counted). */
export function countGathered(deps: LedgerDeps): void {
  const gathered = gathering.get(deps);
  if (!gathered) return;
  gathering.delete(deps);
  clearTimeout(gathered.timer);
  const mine = counting.get(deps) as Set<string>;
  const spends = gathered.costs.map(({ key, input }) => ({ input, pendingKey: key }));
  for (const { queued, spent } of spendMany(deps, spends)) settle(deps, mine, queued.pendingKey, spent);
}

function settle(deps: LedgerDeps, mine: Set<string>, key: string, spent: Promise<unknown>): void {
  spent
    .catch(async (error: unknown) => {
      if (isAppError(error) && error.status < 500 && error.code !== "budget_exceeded") {
        await deps.state.delete(PENDING_SCOPE, key);
      }
    })
    .catch(() => undefined)
    .finally(() => mine.delete(key));
}
