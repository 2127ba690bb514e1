import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { budgetKey, currentPeriod } from "../../../src/workers/ledger/budget.ts";
import {
  type ChargedGroup,
  type ChargeOutcome,
  chargeSpends,
  Refusal,
  type SpendCharge,
} from "../../../src/workers/ledger/charging.ts";
import { monthStartIso, round6 } from "../../../src/workers/ledger/money.ts";
import type { Budget } from "../../../src/workers/ledger/schema.ts";

const NOW = Date.UTC(2025, 5, 15, 12);
const AT = new Date(NOW).toISOString();
const THIS_MONTH = monthStartIso(NOW);
const LAST_MONTH = monthStartIso(Date.UTC(2025, 4, 3));
const AGENTS = ["a1", "a2", "a3"];

/** Cents as the ledger keeps them: 6 decimal places. */
const cents = (max: number) =>
  fc.oneof(fc.integer({ min: 0, max }), fc.double({ min: 0, max, noNaN: true }).map(round6));

/** A budget of `key`: any limit (zero included), spent over or under it, this month or last. */
const budgetOf = (key: string) =>
  fc
    .record({
      monthlyCents: fc.oneof(fc.constant(0), cents(100)),
      spentCents: cents(120),
      softThreshold: fc.double({ min: 0, max: 1, noNaN: true }),
      hardLimit: fc.boolean(),
      billingCode: fc.option(fc.constantFrom("ops", "research"), { nil: undefined }),
      version: fc.nat(50),
      periodStart: fc.constantFrom(THIS_MONTH, THIS_MONTH, LAST_MONTH),
      softAlerted: fc.boolean(),
    })
    .map(
      ({ billingCode, softAlerted, ...fields }): Budget => ({
        id: key,
        realmId: "r1",
        ...(key === "realm" ? {} : { agentId: key.slice("agent:".length) }),
        ...fields,
        ...(billingCode === undefined ? {} : { billingCode }),
        updatedAt: THIS_MONTH,
        ...(softAlerted ? { softAlert: { at: THIS_MONTH, spendId: "spn-earlier" } } : {}),
      }),
    );

/** Some of the agents' budgets and maybe the realm's. */
const budgets = fc
  .subarray([...AGENTS.map((agentId) => budgetKey(agentId)), budgetKey()])
  .chain((keys) => fc.tuple(...keys.map(budgetOf)))
  .map((list) => new Map(list.map((budget): [string, Budget] => [budget.id, budget])));

const spends = fc
  .array(
    fc.record({
      agentId: fc.constantFrom(...AGENTS),
      billingCode: fc.option(fc.constant("own"), { nil: undefined }),
      costCents: cents(30),
      incurred: fc.boolean(),
    }),
    { maxLength: 30 },
  )
  .map((list) =>
    list.map(
      ({ agentId, billingCode, costCents, incurred }, index): SpendCharge => ({
        agentId,
        ...(billingCode === undefined ? {} : { billingCode }),
        charge: { spendId: `spn-${index}`, costCents, now: NOW, at: AT, ...(incurred ? { incurred } : {}) },
      }),
    ),
  );

/** The group charged one spend at a time, each on the budgets the one before left. */
function oneByOne(start: Map<string, Budget>, group: SpendCharge[]): ChargedGroup {
  let current = start;
  const outcomes: ChargeOutcome[] = [];
  const changed = new Set<string>();
  for (const spend of group) {
    const step = chargeSpends(current, [spend]);
    outcomes.push(...step.outcomes);
    for (const key of step.changed) changed.add(key);
    current = step.budgets;
  }
  return { outcomes, budgets: current, changed };
}

/** The keys of the budgets a spend of `agentId` is charged to. */
const keysOf = (start: Map<string, Budget>, agentId: string) =>
  [budgetKey(agentId), budgetKey()].filter((key) => start.has(key));

describe("chargeSpends (properties)", () => {
  it("charges a group exactly as it charges its spends one by one", () => {
    fc.assert(
      fc.property(budgets, spends, (start, group) => {
        expect(chargeSpends(start, group)).toEqual(oneByOne(start, group));
      }),
      { numRuns: 500 },
    );
  });

  it("never lets an accepted spend take a hard-limited budget past a positive limit, unless it was incurred", () => {
    fc.assert(
      fc.property(budgets, spends, (start, group) => {
        let current = start;
        for (const spend of group) {
          const step = chargeSpends(current, [spend]);
          current = step.budgets;
          if (!step.outcomes[0]?.accepted || spend.charge.incurred) continue;
          for (const key of keysOf(start, spend.agentId)) {
            const budget = current.get(key) as Budget;
            if (budget.hardLimit && budget.monthlyCents > 0)
              expect(budget.spentCents).toBeLessThanOrEqual(budget.monthlyCents);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it("leaves every budget unchanged when it refuses a spend", () => {
    fc.assert(
      fc.property(budgets, spends, (start, group) => {
        let current = start;
        for (const spend of group) {
          const step = chargeSpends(current, [spend]);
          if (!step.outcomes[0]?.accepted) {
            expect(step.budgets).toEqual(current);
            expect(step.changed.size).toBe(0);
          }
          current = step.budgets;
        }
      }),
      { numRuns: 500 },
    );
  });

  it("ends with the same budgets whether or not the refused spends were in the group", () => {
    fc.assert(
      fc.property(budgets, spends, (start, group) => {
        const all = chargeSpends(start, group);
        const acceptedOnly = group.filter((_, index) => all.outcomes[index]?.accepted);
        expect(chargeSpends(start, acceptedOnly).budgets).toEqual(all.budgets);
      }),
      { numRuns: 500 },
    );
  });

  it("never lowers what a budget spent this period, and adds exactly the accepted costs to it", () => {
    fc.assert(
      fc.property(budgets, spends, (start, group) => {
        const { outcomes, budgets: after } = chargeSpends(start, group);
        for (const [key, before] of start) {
          const opening = currentPeriod(before, NOW).spentCents;
          const chargedTo = group.filter(
            (spend, index) => outcomes[index]?.accepted && keysOf(start, spend.agentId).includes(key),
          );
          const added = chargedTo.reduce((sum, spend) => sum + spend.charge.costCents, 0);
          const spent = (after.get(key) as Budget).spentCents;
          if (chargedTo.length === 0) expect(after.get(key)).toEqual(before);
          else {
            expect(spent).toBeGreaterThanOrEqual(opening);
            // Rounded to 6 places after every addition: off by at most half a micro-cent per spend.
            expect(Math.abs(spent - (opening + added))).toBeLessThanOrEqual(1e-6 * (group.length + 1));
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it("charges every incurred cost, and says which hard limits it took a budget past from at or under", () => {
    fc.assert(
      fc.property(budgets, spends, (start, group) => {
        let current = start;
        for (const spend of group) {
          const step = chargeSpends(current, [spend]);
          const [outcome] = step.outcomes;
          if (spend.charge.incurred) expect(outcome?.accepted).toBe(true);
          if (outcome?.accepted) {
            const passed = outcome.passedHard.map((refusal) => refusal.budget.id).sort();
            const expected = keysOf(start, spend.agentId)
              .filter((key) => {
                const before = currentPeriod(current.get(key) as Budget, NOW);
                const after = step.budgets.get(key) as Budget;
                const limited = before.hardLimit && before.monthlyCents > 0;
                return (
                  limited && before.spentCents <= before.monthlyCents && after.spentCents > after.monthlyCents
                );
              })
              .sort();
            expect(passed).toEqual(expected);
            if (!spend.charge.incurred) expect(passed).toEqual([]);
          }
          current = step.budgets;
        }
      }),
      { numRuns: 500 },
    );
  });

  it("announces a budget's soft threshold at most once a period, never when it was announced already", () => {
    fc.assert(
      fc.property(budgets, spends, (start, group) => {
        const crossings = chargeSpends(start, group).outcomes.flatMap((outcome) =>
          outcome.accepted ? outcome.crossedSoft.map((budget) => budget.id) : [],
        );
        expect(new Set(crossings).size).toBe(crossings.length);
        for (const key of crossings)
          expect(currentPeriod(start.get(key) as Budget, NOW).softAlert).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });
});

/** A budget of this month with nothing spent, as set_budget writes it. */
function budget(key: string, fields: Partial<Budget>): Budget {
  return {
    id: key,
    realmId: "r1",
    monthlyCents: 100,
    spentCents: 0,
    softThreshold: 0.8,
    hardLimit: true,
    version: 1,
    periodStart: THIS_MONTH,
    updatedAt: THIS_MONTH,
    ...fields,
  };
}
const spendOf = (agentId: string, costCents: number, billingCode?: string): SpendCharge => ({
  agentId,
  ...(billingCode === undefined ? {} : { billingCode }),
  charge: { spendId: "spn-x", costCents, now: NOW, at: AT },
});

describe("chargeSpends (examples)", () => {
  it("refuses with the agent's budget when both would pass their limits, and reports spent + cost", () => {
    const start = new Map([
      ["agent:a1", budget("agent:a1", { spentCents: 90 })],
      ["realm", budget("realm", { spentCents: 95 })],
    ]);
    const [outcome] = chargeSpends(start, [spendOf("a1", 20)]).outcomes;
    expect(outcome).toEqual({ accepted: false, refusal: expect.any(Refusal) });
    const { refusal } = outcome as { refusal: Refusal };
    expect(refusal.budget.id).toBe("agent:a1");
    expect(refusal.wouldSpend).toBe(110);
  });

  it("never refuses on a zero budget, hard limit or not", () => {
    const start = new Map([["realm", budget("realm", { monthlyCents: 0 })]]);
    const { outcomes, budgets } = chargeSpends(start, [spendOf("a1", 5), spendOf("a2", 7)]);
    expect(outcomes.every((outcome) => outcome.accepted)).toBe(true);
    expect(budgets.get("realm")?.spentCents).toBe(12);
  });

  it("attributes a spend to its own billing code, else its agent budget's, else the realm budget's", () => {
    const start = new Map([
      ["agent:a1", budget("agent:a1", { billingCode: "agent-code" })],
      ["realm", budget("realm", { billingCode: "realm-code" })],
    ]);
    const group = [spendOf("a1", 1, "own"), spendOf("a1", 1), spendOf("a2", 1)];
    const codes = chargeSpends(start, group).outcomes.map(
      (outcome) => outcome.accepted && outcome.billingCode,
    );
    expect(codes).toEqual(["own", "agent-code", "realm-code"]);
  });

  it("starts a budget last written in an earlier month from nothing spent, re-arming its soft alert", () => {
    const stale = budget("realm", {
      spentCents: 99,
      periodStart: LAST_MONTH,
      softAlert: { at: LAST_MONTH, spendId: "spn-old" },
    });
    const { outcomes, budgets } = chargeSpends(new Map([["realm", stale]]), [spendOf("a1", 85)]);
    expect(budgets.get("realm")).toMatchObject({
      spentCents: 85,
      periodStart: THIS_MONTH,
      softAlert: { at: AT, spendId: "spn-x" },
    });
    expect(outcomes[0]).toMatchObject({ accepted: true, crossedSoft: [{ id: "realm", spentCents: 85 }] });
  });

  it("charges nothing and changes nothing when the spend has no budget", () => {
    const { outcomes, changed, budgets } = chargeSpends(new Map(), [spendOf("a1", 1_000_000)]);
    expect(outcomes).toEqual([{ accepted: true, billingCode: undefined, crossedSoft: [], passedHard: [] }]);
    expect(changed.size).toBe(0);
    expect(budgets.size).toBe(0);
  });
});
