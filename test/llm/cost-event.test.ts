import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { costEvent } from "../../src/llm/cost-event.ts";
import { spendInput } from "../../src/workers/ledger/schema.ts";

const choice = {
  model: { id: "gpt-4o", inputPrice: 2.5, outputPrice: 10 },
  provider: { id: "openai" },
};
const account = { realmId: "realm-default", agentId: "agent-1" };
const event = (inputTokens: number, outputTokens: number) =>
  costEvent(account, null, choice, { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens });

describe("costEvent", () => {
  it("prices a call's usage at the model's prices, in cents", () => {
    expect(event(1_000_000, 100_000)).toMatchObject({ costCents: 350, inputTokens: 1_000_000 });
  });

  it("is always a spend the ledger takes, whatever usage a provider reports", () => {
    const count = fc.oneof(
      fc.double(),
      fc.integer({ min: -1e12, max: 1e12 }),
      fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -1, 0.5, 2 ** 53),
    );
    fc.assert(
      fc.property(count, count, (input, output) => {
        const charged = event(input, output);
        const { sessionId: _session, cost: _cost, at: _at, ...spend } = charged;
        expect(spendInput.safeParse(spend).success, JSON.stringify(charged)).toBe(true);
        expect(Number.isInteger(charged.inputTokens) && charged.inputTokens >= 0).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("counts a fraction of a token as a whole one, and a negative count as none", () => {
    expect(event(10.2, -5)).toMatchObject({ inputTokens: 11, outputTokens: 0 });
  });
});
