import { alertLevel, budgetKey, currentPeriod } from "./budget.ts";
import { round6 } from "./money.ts";
import type { Budget } from "./schema.ts";

/**
 * The charging rule (DESIGN §5, §6), pure: budgets and spends in, what each spend did and the budgets
 * after out. Reading, writing and retrying are spend.ts's; nothing here touches state or the clock.
 */

/** A spend being applied to a budget. */
export interface Charge {
  spendId: string;
  costCents: number;
  now: number;
  at: string;
  /**
   * A cost already incurred (a model call answered, a search made): counted even past a hard limit,
   * which then stands spent and refuses what comes next. Refusing it would make the call free, and a
   * call costing more than the budget has left would never be counted at all.
   */
  incurred?: boolean;
}

/** The hard limit refuses this spend: the budget that refused (as of the charge) and the sum it would reach. */
export class Refusal {
  readonly budget: Budget;
  /** spentCents + costCents, the figure the error message reports. */
  readonly wouldSpend: number;
  constructor(budget: Budget, wouldSpend: number) {
    this.budget = budget;
    this.wouldSpend = wouldSpend;
  }
}

export interface ChargedBudget {
  next: Budget;
  /** True for exactly the spend that first takes the budget to its soft threshold this period. */
  crossedSoft: boolean;
  /** An incurred cost that took the budget past its hard limit (it was not past it before). */
  passedHard?: Refusal;
}

/**
 * The spend applied to one budget, checking the hard limit on the value it builds on (so spends
 * charged one after the other cannot jointly pass it). The soft alert's flag is set in the same value.
 */
export function chargeBudget(stored: Budget, charge: Charge): ChargedBudget | Refusal {
  const budget = currentPeriod(stored, charge.now);
  const spent = round6(budget.spentCents + charge.costCents);
  // DESIGN §6 (spent + cost > monthly refuses); a zero budget has no limit to pass (see reachesLimit).
  const passes = budget.hardLimit && budget.monthlyCents > 0 && spent > budget.monthlyCents;
  if (passes && !charge.incurred) return new Refusal(budget, spent);
  const passedHard =
    passes && budget.spentCents <= budget.monthlyCents ? new Refusal(budget, spent) : undefined;
  const crossedSoft =
    !budget.softAlert && alertLevel(spent, budget.monthlyCents, budget.softThreshold) !== null;
  const next: Budget = {
    ...budget,
    spentCents: spent,
    version: stored.version + 1,
    updatedAt: charge.at,
    ...(crossedSoft ? { softAlert: { at: charge.at, spendId: charge.spendId } } : {}),
  };
  return { next, crossedSoft, ...(passedHard ? { passedHard } : {}) };
}

/** One spend of a group: whose it is, its own billing code if any, and the charge. */
export interface SpendCharge {
  agentId: string;
  billingCode?: string;
  charge: Charge;
}

export type ChargeOutcome =
  | {
      accepted: true;
      /** The spend's own code, else its budgets' (the agent's first): what the event is attributed to. */
      billingCode: string | undefined;
      /** The budgets (as charged) whose soft threshold this spend crossed. */
      crossedSoft: Budget[];
      /** The hard limits this incurred cost passed (each as a refusal would have reported it). */
      passedHard: Refusal[];
    }
  | { accepted: false; refusal: Refusal };

export interface ChargedGroup {
  /** One per spend, in the spends' order. */
  outcomes: ChargeOutcome[];
  /** Every budget given, as it stands after the group. */
  budgets: Map<string, Budget>;
  /** The keys of the budgets some spend was charged to: those to write. */
  changed: Set<string>;
}

/**
 * Spends of one realm charged in order to the budgets that exist of theirs (keyed by budgetKey: the
 * agent's and the realm's). A spend either is charged to both, building on the spends before it, or
 * is refused when either's hard limit would be passed, and then neither is charged — unless it is an
 * incurred cost, which is always charged (and says which hard limits it passed).
 */
export function chargeSpends(
  budgets: ReadonlyMap<string, Budget>,
  spends: readonly SpendCharge[],
): ChargedGroup {
  const current = new Map(budgets);
  const changed = new Set<string>();
  const outcomes = spends.map((spend): ChargeOutcome => {
    const keys = [budgetKey(spend.agentId), budgetKey()].filter((key) => current.has(key));
    const applied: ChargedBudget[] = [];
    for (const key of keys) {
      const result = chargeBudget(current.get(key) as Budget, spend.charge);
      if (result instanceof Refusal) return { accepted: false, refusal: result };
      applied.push(result);
    }
    for (const [index, key] of keys.entries()) {
      current.set(key, (applied[index] as ChargedBudget).next);
      changed.add(key);
    }
    return {
      accepted: true,
      billingCode: spend.billingCode ?? applied.find(({ next }) => next.billingCode)?.next.billingCode,
      crossedSoft: applied.filter((entry) => entry.crossedSoft).map(({ next }) => next),
      passedHard: applied.flatMap((entry) => (entry.passedHard ? [entry.passedHard] : [])),
    };
  });
  return { outcomes, budgets: current, changed };
}
