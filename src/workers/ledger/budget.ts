import { conflict } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { monthStartIso, round6 } from "./money.ts";
import type { AlertLevel, Budget, BudgetScope, CheckResult, SetBudgetInput } from "./schema.ts";

export const DEFAULT_SOFT_THRESHOLD = 0.8;

export const budgetsScope = (realmId: string) => `ledger_budgets:${realmId}`;
/** One realm-wide budget (`realm`) and one per agent (`agent:<id>`) in each realm's scope. */
export const budgetKey = (agentId?: string) => (agentId === undefined ? "realm" : `agent:${agentId}`);

/**
 * The budget as it stands at `now`: one from an earlier month reads as reset (nothing spent, no soft
 * alert sent), and the next write persists that.
 */
export function currentPeriod(budget: Budget, now: number): Budget {
  const start = monthStartIso(now);
  if (Date.parse(budget.periodStart) >= Date.parse(start)) return budget;
  const { softAlert: _sent, ...rest } = budget;
  return { ...rest, spentCents: 0, periodStart: start };
}

/** Whether a write of this budget at `now` starts a new period (it was last written in an earlier month). */
export const startsPeriod = (budget: Budget, now: number) => currentPeriod(budget, now) !== budget;

/**
 * The spec's alert table. Compared in cents rather than percent, and the threshold rounded like
 * cents are, so 0.7 × 100 (70.00000000000001 in floating point) still means 70.
 */
export function alertLevel(spent: number, monthly: number, softThreshold: number): AlertLevel | null {
  // Utilization is defined as 0 for a zero budget: only a zero threshold reaches it.
  if (monthly <= 0) return softThreshold <= 0 ? "Warning" : null;
  if (spent >= monthly) return "Critical";
  return spent >= round6(softThreshold * monthly) ? "Warning" : null;
}

/**
 * The spec's table: refused (with a hard limit) from 100 % utilization, and utilization is 0 for a zero
 * budget, so a zero budget never refuses (issue #36): a realm that must stop spending sets a status.
 */
export const reachesLimit = (spent: number, monthly: number) => monthly > 0 && spent >= monthly;

export const utilizationPct = (spent: number, monthly: number) =>
  monthly <= 0 ? 0 : round6((spent / monthly) * 100);

export const exceededMessage = (agentId: string, spent: number, limit: number) =>
  `agent ${agentId} exceeded budget: ${spent}/${limit}`;

/** One budget's check result (the budget already brought to the current period). */
export function evaluate(budget: Budget, scope: BudgetScope, agentId: string): CheckResult {
  const { spentCents, monthlyCents } = budget;
  const alert = alertLevel(spentCents, monthlyCents, budget.softThreshold);
  const allowed = !(budget.hardLimit && reachesLimit(spentCents, monthlyCents));
  return {
    allowed,
    spentCents,
    limitCents: monthlyCents,
    remainingCents: round6(Math.max(monthlyCents - spentCents, 0)),
    utilizationPct: utilizationPct(spentCents, monthlyCents),
    alert,
    scope,
    budgetId: budget.id,
    ...(allowed ? {} : { reason: exceededMessage(agentId, spentCents, monthlyCents) }),
  };
}

/** Fail-safe (spec): no budget at all allows. */
export const NO_BUDGET: CheckResult = {
  allowed: true,
  spentCents: 0,
  limitCents: 0,
  remainingCents: 0,
  utilizationPct: 0,
  alert: null,
  scope: null,
  budgetId: null,
};

/** The tighter of the two: a refusing one first, else the higher utilization; ties go to the agent's. */
export function tighter(agent: CheckResult | null, realm: CheckResult | null): CheckResult {
  if (!agent || !realm) return agent ?? realm ?? NO_BUDGET;
  if (agent.allowed !== realm.allowed) return agent.allowed ? realm : agent;
  return realm.utilizationPct > agent.utilizationPct ? realm : agent;
}

/** The soft alert is kept only while the budget is still at or over its (possibly new) threshold. */
function keptSoftAlert(budget: Omit<Budget, "softAlert">, softAlert: Budget["softAlert"]) {
  if (!softAlert) return {};
  const reached = alertLevel(budget.spentCents, budget.monthlyCents, budget.softThreshold) !== null;
  return reached ? { softAlert } : {};
}

/**
 * set_budget's change: create, or update keeping id, spend and period; settings the caller omits
 * keep their previous values. A re-budget that takes utilization back under the threshold re-arms
 * the soft alert, so crossing the new threshold is announced. `openingCents` is what the budget's
 * scope spent this month so far: where a new period starts (a new budget, or one last written in an
 * earlier month), the budget starts from it rather than from 0 (issue #36).
 */
export function upsertBudget(
  stored: Budget | null,
  input: SetBudgetInput,
  now: number,
  updatedAt: string,
  openingCents = 0,
): Budget {
  const previousVersion = stored?.version ?? 0;
  if (input.expectedVersion !== undefined && input.expectedVersion !== previousVersion) {
    throw conflict(
      `Budget ${budgetKey(input.agentId)} of realm ${input.realmId} is at version ${previousVersion}, not ${input.expectedVersion}`,
    );
  }
  // Settings carry over into a new period; the spend does not (it starts from openingCents).
  const opening = !stored || startsPeriod(stored, now);
  const base = stored ? currentPeriod(stored, now) : null;
  const billingCode = input.billingCode === null ? undefined : (input.billingCode ?? base?.billingCode);
  const next: Omit<Budget, "softAlert"> = {
    id: base?.id ?? newId("bgt"),
    realmId: input.realmId,
    ...(input.agentId === undefined ? {} : { agentId: input.agentId }),
    monthlyCents: input.monthlyCents,
    spentCents: opening ? round6(openingCents) : (base?.spentCents ?? 0),
    softThreshold: input.softThreshold ?? base?.softThreshold ?? DEFAULT_SOFT_THRESHOLD,
    hardLimit: input.hardLimit ?? base?.hardLimit ?? true,
    ...(billingCode === undefined ? {} : { billingCode }),
    version: previousVersion + 1,
    periodStart: base?.periodStart ?? monthStartIso(now),
    updatedAt,
  };
  return { ...next, ...keptSoftAlert(next, base?.softAlert) };
}
