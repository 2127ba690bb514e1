import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { setClock } from "../../../src/shared/clock.ts";
import { createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { eventually } from "../../helpers/iii.ts";
import { type JsonBody, json, type TestServer } from "../../helpers/server.ts";
import { check, ledgerServer, postSpend, realmWithAgent, setBudget, spendOf } from "./setup.ts";

const ctx = ledgerServer();

async function summary(server: TestServer, realmId: string, query = ""): Promise<JsonBody> {
  const response = await server.request(`/api/ledger/summary/${realmId}${query}`);
  expect(response.status).toBe(200);
  return json(response);
}

const at = (iso: string) => setClock({ now: () => Date.parse(iso) });

describe("ledger::summary", () => {
  it("sums accepted spends by agent, model, provider and billing code", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const other = await createAgent(ctx.server, realmId, { name: "other" });
    await setBudget(ctx.server, { realmId, agentId: other, monthlyCents: 10_000, billingCode: "team.b" });
    const spends = [
      spendOf(realmId, agentId, 10, { model: "gpt-4o", provider: "openai" }),
      spendOf(realmId, agentId, 2.5, { model: "claude.sonnet", provider: "anthropic", billingCode: "x.1" }),
      spendOf(realmId, other, 7, { model: "gpt-4o", provider: "openai", inputTokens: 5, outputTokens: 1 }),
    ];
    for (const body of spends) expect((await postSpend(ctx.server, body)).status).toBe(201);
    const totals = { totalCents: 19.5, totalInputTokens: 205, totalOutputTokens: 41, eventCount: 3 };
    expect(await summary(ctx.server, realmId)).toEqual({
      ...totals,
      breakdown: { [agentId]: 12.5, [other]: 7 },
    });
    expect((await summary(ctx.server, realmId, "?groupBy=model")).breakdown).toEqual({
      "gpt-4o": 17,
      "claude.sonnet": 2.5,
    });
    expect((await summary(ctx.server, realmId, "?groupBy=provider")).breakdown).toEqual({
      openai: 17,
      anthropic: 2.5,
    });
    // A spend without a code takes its budget's; with neither it is "none".
    expect((await summary(ctx.server, realmId, "?groupBy=billing_code")).breakdown).toEqual({
      none: 10,
      "x.1": 2.5,
      "team.b": 7,
    });
  });

  it("answers zeros for a realm without spends", async () => {
    const realmId = await newRealm(ctx.server);
    expect(await summary(ctx.server, realmId)).toEqual({
      totalCents: 0,
      totalInputTokens: 0,
      totalOutputTokens: 0,
      eventCount: 0,
      breakdown: {},
    });
  });

  it("sums one UTC month with period=YYYY-MM, all time without", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    at("2026-01-31T23:59:59.000Z");
    await postSpend(ctx.server, spendOf(realmId, agentId, 4));
    at("2026-02-01T00:00:00.000Z");
    await postSpend(ctx.server, spendOf(realmId, agentId, 6));
    expect(await summary(ctx.server, realmId, "?period=2026-01")).toMatchObject({
      totalCents: 4,
      eventCount: 1,
    });
    expect(await summary(ctx.server, realmId, "?period=2026-02")).toMatchObject({
      totalCents: 6,
      eventCount: 1,
    });
    expect(await summary(ctx.server, realmId, "?period=2025-12")).toMatchObject({
      totalCents: 0,
      eventCount: 0,
    });
    expect(await summary(ctx.server, realmId)).toMatchObject({ totalCents: 10, eventCount: 2 });
  });

  it.each([
    ["?groupBy=team", "groupBy: groupBy must be one of agent, model, provider, billing_code"],
    ["?period=2026-13", "period: period must be a month written YYYY-MM"],
    ["?period=26-01", "period: period must be a month written YYYY-MM"],
  ])("refuses %s with 400", async (query, message) => {
    const response = await ctx.server.request(`/api/ledger/summary/realm-x${query}`);
    expect(response.status).toBe(400);
    expect((await json(response)).error).toBe(message);
  });
});

describe("monthly reset", () => {
  it("starts every budget afresh at the start of the UTC month, soft alert included", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    at("2026-01-10T12:00:00.000Z");
    const budget = await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    expect(budget.periodStart).toBe("2026-01-01T00:00:00.000Z");
    await postSpend(ctx.server, spendOf(realmId, agentId, 100));
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({ allowed: false, spentCents: 100 });

    at("2026-02-01T00:00:00.000Z");
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({
      allowed: true,
      spentCents: 0,
      alert: null,
      budgetId: budget.id,
    });
    const spent = await postSpend(ctx.server, spendOf(realmId, agentId, 85));
    expect(spent.status).toBe(201);
    const stored = await ctx.server.service.engine.trigger({
      function_id: "state::get",
      payload: { scope: `ledger_budgets:${realmId}`, key: `agent:${agentId}` },
    });
    expect(stored).toMatchObject({ id: budget.id, spentCents: 85, periodStart: "2026-02-01T00:00:00.000Z" });
    const soft = await eventually(() => {
      const found = ctx.probes.alerts.filter((alert) => alert.type === "soft_threshold");
      return found.length === 2 && found;
    });
    expect(soft.map((alert: JsonBody) => alert.spentCents)).toEqual([100, 85]);
  });

  it("persists the reset on a set_budget in the new month", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    at("2026-03-31T23:00:00.000Z");
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    await postSpend(ctx.server, spendOf(realmId, agentId, 40));
    at("2026-04-01T01:00:00.000Z");
    expect(await setBudget(ctx.server, { realmId, agentId, monthlyCents: 200 })).toMatchObject({
      spentCents: 0,
      periodStart: "2026-04-01T00:00:00.000Z",
    });
  });
});

describe("tenant isolation", () => {
  it("shows a realm-bound key nothing of another realm's ledger on any route (404)", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const mine = await newRealm(ctx.server, "mine");
    const key = await realmKey(ctx.server, mine);
    const attempts: Array<[string, string, unknown]> = [
      ["/api/ledger/budget", "POST", { realmId, monthlyCents: 5 }],
      [`/api/ledger/check/${realmId}/${agentId}`, "GET", undefined],
      ["/api/ledger/spend", "POST", spendOf(realmId, agentId, 1)],
      [`/api/ledger/summary/${realmId}`, "GET", undefined],
    ];
    for (const [path, method, body] of attempts) {
      const response = await ctx.server.request(path, { method, key, json: body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await json(response)).error).toContain(`Realm ${realmId} not found`);
    }
    expect((await ctx.server.request(`/api/ledger/summary/${mine}`, { key })).status).toBe(200);
    expect((await ctx.server.request(`/api/ledger/check/${mine}/${agentId}`, { key })).status).toBe(200);
  });
});

describe("ledger::purge_realm", () => {
  it("deletes every budget, spend event, total and eventId claim of the realm, and is idempotent", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const kept = await realmWithAgent(ctx.server);
    const eventId = randomUUID();
    for (const realm of [{ realmId, agentId }, kept]) {
      await setBudget(ctx.server, { realmId: realm.realmId, agentId: realm.agentId, monthlyCents: 100 });
      await setBudget(ctx.server, { realmId: realm.realmId, monthlyCents: 100 });
      await postSpend(ctx.server, spendOf(realm.realmId, realm.agentId, 10, { eventId }));
    }
    const purge = () =>
      ctx.server.service.engine.trigger({ function_id: "ledger::purge_realm", payload: { realmId } });
    // 2 budgets, 1 spend event, 2 totals (all time, this month), 1 claim.
    expect(await purge()).toEqual({ realmId, deleted: 6 });
    expect(await purge()).toEqual({ realmId, deleted: 0 });
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({ scope: null, spentCents: 0 });
    expect(await summary(ctx.server, realmId)).toMatchObject({ totalCents: 0, eventCount: 0 });
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 10, { eventId }))).status).toBe(201);
    expect(await summary(ctx.server, realmId)).toMatchObject({ eventCount: 1 });
    expect(await check(ctx.server, kept.realmId, kept.agentId)).toMatchObject({ spentCents: 10 });
  });
});
