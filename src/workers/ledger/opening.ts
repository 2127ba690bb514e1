import { isConflict, serialized } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import { AppError } from "../../shared/errors.ts";
import { budgetKey, budgetsScope, startsPeriod, upsertBudget } from "./budget.ts";
import { periodKey } from "./money.ts";
import type { Budget, SetBudgetInput } from "./schema.ts";
import { spentIn, type Totals, totalsScope } from "./totals.ts";

const MAX_ATTEMPTS = 64;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * set_budget's write (compare-and-swap on the budget, like casUpdate). A budget that starts a period
 * (created mid-month, or last written in an earlier month) starts from what its scope already spent
 * this month, read from the month's running totals (the realm's total, or the agent's share), so the
 * first month lets through no more than the limit (issue #36).
 *
 * No spend is lost or counted twice between that read and the write: the write also touches the month's
 * totals on condition of the version read, and a spend made while there was no budget checks in its own
 * transaction, after its totals, that the budget is still absent (spend.ts). Whichever commits second
 * retries: the budget from totals that include the spend, or the spend charging the new budget.
 */
export function writeBudget(
  state: StateClient,
  input: SetBudgetInput,
  now: number,
  at: string,
): Promise<Budget> {
  const scope = budgetsScope(input.realmId);
  const key = budgetKey(input.agentId);
  // Writers of one budget in this process queue (as casUpdate's do), so contention retries across nodes only.
  return serialized(`${scope}\u0000${key}`, async () => {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const stored = await state.getVersioned<Budget>(scope, key);
      const ops: BatchOp[] = [];
      let opening = 0;
      if (!stored || startsPeriod(stored.value, now)) {
        const month = periodKey(now);
        const totals = await state.getVersioned<Totals>(totalsScope(input.realmId), month);
        opening = spentIn(totals?.value, input.agentId);
        // Increments by 0: changes no figure, but the write fails if a spend was counted since the read.
        const touch = { type: "increment" as const, path: "eventCount", by: 0 };
        const expectedVersion = totals?.version ?? 0;
        ops.push({
          type: "update",
          scope: totalsScope(input.realmId),
          key: month,
          ops: [touch],
          expectedVersion,
        });
      }
      const next = upsertBudget(stored?.value ?? null, input, now, at, opening);
      ops.push({ type: "set", scope, key, value: next, expectedVersion: stored?.version ?? 0 });
      try {
        await state.batch(ops);
        return next;
      } catch (error) {
        if (!isConflict(error)) throw error;
        await pause(Math.random() * Math.min(2 ** attempt, 50));
      }
    }
    throw new AppError("unavailable", `Too much contention on ${scope}/${key}; try again`);
  });
}
