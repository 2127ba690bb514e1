import { describe, expect, it } from "vitest";
import { setClock } from "../../../src/shared/clock.ts";
import { createAgent } from "../../helpers/control-plane.ts";
import { json } from "../../helpers/server.ts";
import { check, ledgerServer, postSpend, realmWithAgent, setBudget, spendOf } from "./setup.ts";

const ctx = ledgerServer();

const at = (iso: string) => setClock({ now: () => Date.parse(iso) });

describe("a budget set mid-month starts from the month's spend so far", () => {
  it("starts a realm budget from everything the realm spent this month (not earlier months)", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const other = await createAgent(ctx.server, realmId, { name: "other" });
    at("2026-05-28T12:00:00.000Z");
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 500))).status).toBe(201);
    at("2026-06-10T12:00:00.000Z");
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 30))).status).toBe(201);
    expect((await postSpend(ctx.server, spendOf(realmId, other, 20.5))).status).toBe(201);

    const budget = await setBudget(ctx.server, { realmId, monthlyCents: 100 });
    expect(budget).toMatchObject({ spentCents: 50.5, periodStart: "2026-06-01T00:00:00.000Z" });
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({
      allowed: true,
      spentCents: 50.5,
      remainingCents: 49.5,
      scope: "realm",
    });
    // The first month lets through no more than the limit.
    const refused = await postSpend(ctx.server, spendOf(realmId, other, 60));
    expect(refused.status).toBe(402);
    expect((await json(refused)).error).toBe(`agent ${other} exceeded budget: 110.5/100`);
    expect((await postSpend(ctx.server, spendOf(realmId, other, 49.5))).status).toBe(201);
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({ allowed: false, spentCents: 100 });
  });

  it("starts an agent budget from that agent's own spend this month", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const other = await createAgent(ctx.server, realmId, { name: "other" });
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 30))).status).toBe(201);
    expect((await postSpend(ctx.server, spendOf(realmId, other, 20))).status).toBe(201);

    expect(await setBudget(ctx.server, { realmId, agentId, monthlyCents: 40 })).toMatchObject({
      spentCents: 30,
    });
    expect(await setBudget(ctx.server, { realmId, agentId: other, monthlyCents: 40 })).toMatchObject({
      spentCents: 20,
    });
    const refused = await postSpend(ctx.server, spendOf(realmId, agentId, 15));
    expect(refused.status).toBe(402);
    expect((await json(refused)).error).toBe(`agent ${agentId} exceeded budget: 45/40`);
    // Updating an existing budget keeps its spend (it is not read again from the totals).
    expect(await setBudget(ctx.server, { realmId, agentId, monthlyCents: 80 })).toMatchObject({
      spentCents: 30,
    });
  });

  it("counts every spend exactly once when the budget is created while spends are being counted", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    for (let i = 0; i < 5; i++)
      expect((await postSpend(ctx.server, spendOf(realmId, agentId, 1))).status).toBe(201);
    const spends = Array.from({ length: 40 }, () => postSpend(ctx.server, spendOf(realmId, agentId, 1)));
    const budget = setBudget(ctx.server, { realmId, monthlyCents: 1_000_000, hardLimit: false });
    const statuses = await Promise.all(spends.map(async (spend) => (await spend).status));
    expect(statuses.every((status) => status === 201)).toBe(true);
    await budget;
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({ spentCents: 45, scope: "realm" });
  });
});
