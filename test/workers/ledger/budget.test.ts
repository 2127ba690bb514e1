import { describe, expect, it } from "vitest";
import { createAgent, newRealm } from "../../helpers/control-plane.ts";
import { json } from "../../helpers/server.ts";
import { check, ledgerServer, postSpend, realmWithAgent, setBudget, spendOf } from "./setup.ts";

const ctx = ledgerServer();

const monthStart = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
};

describe("ledger::set_budget", () => {
  it("creates per-agent and realm-wide budgets with the spec's defaults", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const agentBudget = await setBudget(ctx.server, { realmId, agentId, monthlyCents: 500 });
    expect(agentBudget).toEqual({
      id: expect.stringMatching(/^bgt-[0-9a-f-]{36}$/),
      realmId,
      agentId,
      monthlyCents: 500,
      spentCents: 0,
      softThreshold: 0.8,
      hardLimit: true,
      version: 1,
      periodStart: monthStart(),
      updatedAt: expect.any(String),
    });
    const realmBudget = await setBudget(ctx.server, { realmId, monthlyCents: 9000, billingCode: "ops" });
    expect(realmBudget).not.toHaveProperty("agentId");
    expect(realmBudget).toMatchObject({ monthlyCents: 9000, billingCode: "ops", version: 1 });
    expect(realmBudget.id).not.toBe(agentBudget.id);
  });

  it("updates in place: id, spend and period kept, omitted settings kept, version + 1", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const first = await setBudget(ctx.server, {
      realmId,
      agentId,
      monthlyCents: 500,
      softThreshold: 0.5,
      hardLimit: false,
      billingCode: "team-a",
    });
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 120))).status).toBe(201);
    const second = await setBudget(ctx.server, { realmId, agentId, monthlyCents: 800 });
    expect(second).toMatchObject({
      id: first.id,
      monthlyCents: 800,
      spentCents: 120,
      softThreshold: 0.5,
      hardLimit: false,
      billingCode: "team-a",
      periodStart: first.periodStart,
      // The spend wrote version 2.
      version: 3,
    });
    const cleared = await setBudget(ctx.server, { realmId, agentId, monthlyCents: 800, billingCode: null });
    expect(cleared).not.toHaveProperty("billingCode");
    expect(cleared.version).toBe(4);
  });

  it("refuses a stale expectedVersion with 409 and applies a current one", async () => {
    const realmId = await newRealm(ctx.server);
    await setBudget(ctx.server, { realmId, monthlyCents: 100 });
    const stale = await ctx.server.request("/api/ledger/budget", {
      method: "POST",
      json: { realmId, monthlyCents: 200, expectedVersion: 0 },
    });
    expect(stale.status).toBe(409);
    expect((await json(stale)).error).toBe(`Budget realm of realm ${realmId} is at version 1, not 0`);
    expect(await setBudget(ctx.server, { realmId, monthlyCents: 200, expectedVersion: 1 })).toMatchObject({
      monthlyCents: 200,
      version: 2,
    });
  });

  it.each([
    [{ monthlyCents: 100 }, "realmId: realmId is required"],
    [{ realmId: "r" }, "monthlyCents: monthlyCents is required"],
    [{ realmId: "r", monthlyCents: -1 }, "monthlyCents: monthlyCents must be 0 or more"],
    [{ realmId: "r", monthlyCents: 1.5 }, "monthlyCents: monthlyCents must be an integer"],
    [{ realmId: "r", monthlyCents: "100" }, "monthlyCents: monthlyCents must be a number"],
    [
      { realmId: "r", monthlyCents: 1, softThreshold: 1.5 },
      "softThreshold: softThreshold must be between 0 and 1",
    ],
    [{ realmId: "r", monthlyCents: 1, hardLimit: "yes" }, "hardLimit: hardLimit must be a boolean"],
    [{ realmId: "r", monthlyCents: 1, agentId: "" }, "agentId: agentId must not be empty"],
    [{ realmId: "r", monthlyCents: 1, billingCode: "__proto__" }, "billingCode: billingCode must not be"],
    [{ realmId: "r", monthlyCents: 1, limit: 5 }, "limit"],
  ])("refuses %j with 400: %s", async (body, message) => {
    const response = await ctx.server.request("/api/ledger/budget", { method: "POST", json: body });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain(message);
  });

  it("refuses a per-agent budget for another realm's agent with 404; an unknown agent id is opaque", async () => {
    const realmId = await newRealm(ctx.server, "one");
    const otherRealm = await newRealm(ctx.server, "two");
    const stranger = await createAgent(ctx.server, otherRealm);
    const budget = (agentId: string) =>
      ctx.server.request("/api/ledger/budget", {
        method: "POST",
        json: { realmId, agentId, monthlyCents: 100 },
      });
    const refused = await budget(stranger);
    expect(refused.status).toBe(404);
    expect((await json(refused)).error).toBe(`Agent ${stranger} not found in realm ${realmId}`);
    expect((await budget("agent-a")).status).toBeLessThan(300);
    // A cost for an agent the service never created is counted (a remote worker's agent).
    const spent = await ctx.server.request("/api/ledger/spend", {
      method: "POST",
      json: {
        realmId,
        agentId: "agent-a",
        costCents: 7,
        provider: "openai",
        model: "gpt-4o",
        inputTokens: 1,
        outputTokens: 1,
      },
    });
    expect(spent.status).toBe(201);
    const summary = await json(await ctx.server.request(`/api/ledger/summary/${realmId}?groupBy=agent`));
    expect(summary.breakdown["agent-a"]).toBe(7);
  });
});

describe("ledger::check: the alert table", () => {
  it("allows with zeros when no budget applies", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    expect(await check(ctx.server, realmId, agentId)).toEqual({
      allowed: true,
      spentCents: 0,
      limitCents: 0,
      remainingCents: 0,
      utilizationPct: 0,
      alert: null,
      scope: null,
      budgetId: null,
    });
  });

  it("moves null → Warning at exactly the threshold → Critical at exactly 100%, refusing with a reason", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const budget = await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100, softThreshold: 0.7 });
    const steps: Array<[number, Record<string, unknown>]> = [
      [69, { allowed: true, spentCents: 69, remainingCents: 31, utilizationPct: 69, alert: null }],
      // 0.7 × 100 is 70.00000000000001 in floating point: 70 cents must still count as reaching it.
      [1, { allowed: true, spentCents: 70, remainingCents: 30, utilizationPct: 70, alert: "Warning" }],
      [
        29.5,
        { allowed: true, spentCents: 99.5, remainingCents: 0.5, utilizationPct: 99.5, alert: "Warning" },
      ],
      [0.5, { allowed: false, spentCents: 100, remainingCents: 0, utilizationPct: 100, alert: "Critical" }],
    ];
    for (const [cost, expected] of steps) {
      expect((await postSpend(ctx.server, spendOf(realmId, agentId, cost))).status).toBe(201);
      expect(await check(ctx.server, realmId, agentId)).toMatchObject({
        ...expected,
        limitCents: 100,
        scope: "agent",
        budgetId: budget.id,
      });
    }
    expect((await check(ctx.server, realmId, agentId)).reason).toBe(
      `agent ${agentId} exceeded budget: 100/100`,
    );
  });

  it("keeps allowing past 100% without a hard limit (Critical at 150%)", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100, hardLimit: false });
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 150))).status).toBe(201);
    const result = await check(ctx.server, realmId, agentId);
    expect(result).toMatchObject({
      allowed: true,
      spentCents: 150,
      remainingCents: 0,
      utilizationPct: 150,
      alert: "Critical",
    });
    expect(result).not.toHaveProperty("reason");
  });

  it("follows the alert table for a zero budget: 0% utilization, no alert, allowed, and spends are not refused", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 0 });
    await setBudget(ctx.server, { realmId, monthlyCents: 0, hardLimit: true });
    const answer = await check(ctx.server, realmId, agentId);
    expect(answer).toMatchObject({ allowed: true, limitCents: 0, utilizationPct: 0, alert: null });
    expect(answer).not.toHaveProperty("reason");
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 0))).status).toBe(201);
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 25))).status).toBe(201);
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({
      allowed: true,
      spentCents: 25,
      remainingCents: 0,
      utilizationPct: 0,
      alert: null,
    });
  });
});

describe("ledger::check: agent and realm budgets both apply", () => {
  it.each([
    ["realm", "agent's", { agentCents: 1000, realmCents: 100 }],
    ["agent", "realm's", { agentCents: 50, realmCents: 10_000 }],
  ] as const)(
    "reports the %s budget when it refuses although the %s allows",
    async (scope, _other, limits) => {
      const { realmId, agentId } = await realmWithAgent(ctx.server);
      const budgets = {
        agent: await setBudget(ctx.server, { realmId, agentId, monthlyCents: limits.agentCents }),
        realm: await setBudget(ctx.server, { realmId, monthlyCents: limits.realmCents }),
      };
      // Spending exactly the tighter limit: that budget refuses, the other still allows.
      const limit = Math.min(limits.agentCents, limits.realmCents);
      expect((await postSpend(ctx.server, spendOf(realmId, agentId, limit))).status).toBe(201);
      expect(await check(ctx.server, realmId, agentId)).toMatchObject({
        allowed: false,
        scope,
        budgetId: budgets[scope].id,
        spentCents: limit,
        limitCents: limit,
        alert: "Critical",
        reason: `agent ${agentId} exceeded budget: ${limit}/${limit}`,
      });
    },
  );

  it("reports the higher utilization when both allow, the agent's on a tie", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const other = await createAgent(ctx.server, realmId, { name: "other" });
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1000 });
    await setBudget(ctx.server, { realmId, monthlyCents: 200 });
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 20))).status).toBe(201);
    // agent 2%, realm 10%
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({ scope: "realm", utilizationPct: 10 });
    expect((await postSpend(ctx.server, spendOf(realmId, other, 0))).status).toBe(201);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 200 });
    // both 10%
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({ scope: "agent", utilizationPct: 10 });
    // An agent without its own budget is held to the realm's.
    expect(await check(ctx.server, realmId, other)).toMatchObject({ scope: "realm", spentCents: 20 });
  });

  it("sees a spend of this service at once, although it reuses the budgets it read moments ago", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({ allowed: true, spentCents: 0 });
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 100))).status).toBe(201);
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({ allowed: false, spentCents: 100 });
  });

  it("refuses a bad check request with 400", async () => {
    const response = await ctx.server.request("/api/ledger/check/r/a?verbose=1");
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain("verbose");
  });
});
