import { describe, expect, it } from "vitest";
import { eventually } from "../../helpers/iii.ts";
import { type JsonBody, json, type TestServer } from "../../helpers/server.ts";
import { check, ledgerServer, postSpend, realmWithAgent, setBudget, spendOf } from "./setup.ts";

const ctx = ledgerServer();

async function summary(server: TestServer, realmId: string): Promise<JsonBody> {
  return json(await server.request(`/api/ledger/summary/${realmId}`));
}

/** The stored spend events of a realm (read straight from state: the ledger has no listing route). */
async function storedEvents(server: TestServer, realmId: string): Promise<JsonBody[]> {
  const page = (await server.service.engine.trigger({
    function_id: "state::list",
    payload: { scope: `ledger_spend:${realmId}`, limit: 1000 },
  })) as { items: Array<{ value: JsonBody }> };
  return page.items.map((item) => item.value);
}

describe("ledger::spend", () => {
  it("records the event and counts it against the budget", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1000 });
    const response = await postSpend(ctx.server, spendOf(realmId, agentId, 12, { missionId: "msn-1" }));
    expect(response.status).toBe(201);
    const event = await json(response);
    expect(event).toEqual({
      id: expect.stringMatching(/^spn-[0-9a-f-]{36}$/),
      realmId,
      agentId,
      costCents: 12,
      provider: "openai",
      model: "gpt-4o",
      inputTokens: 100,
      outputTokens: 20,
      missionId: "msn-1",
      timestamp: expect.any(String),
      status: "accepted",
    });
    expect(await storedEvents(ctx.server, realmId)).toEqual([event]);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(12);
  });

  it("keeps fractional cents to 6 places without drift", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1000 });
    const first = await json(await postSpend(ctx.server, spendOf(realmId, agentId, 0.123456789)));
    expect(first.costCents).toBe(0.123457);
    for (let i = 0; i < 10; i++) await postSpend(ctx.server, spendOf(realmId, agentId, 0.1));
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(1.123457);
    expect((await summary(ctx.server, realmId)).totalCents).toBe(1.123457);
  });

  it.each([
    [{ costCents: undefined }, "costCents: costCents is required"],
    [{ costCents: -1 }, "costCents: costCents must be 0 or more"],
    [{ costCents: "5" }, "costCents: costCents must be a number"],
    [{ inputTokens: 1.5 }, "inputTokens: inputTokens must be an integer"],
    [{ model: undefined }, "model: model is required"],
    [{ agentId: "constructor" }, "agentId: agentId must not be"],
    [{ inputTokens: 1_000_000_001 }, "inputTokens: inputTokens must be at most 1000000000"],
    [{ outputTokens: 1e12 }, "outputTokens: outputTokens must be at most 1000000000"],
    [{ provider: "p".repeat(201) }, "provider: provider must be at most 200 characters"],
    [{ model: "m".repeat(201) }, "model: model must be at most 200 characters"],
    [{ billingCode: "b".repeat(201) }, "billingCode: billingCode must be at most 200 characters"],
    [{ missionId: "x".repeat(201) }, "missionId: missionId must be at most 200 characters"],
    [{ eventId: "e".repeat(201) }, "eventId: eventId must be at most 200 characters"],
    [{ agentId: "a".repeat(201) }, "agentId: agentId must be at most 200 characters"],
    [{ realmId: "r".repeat(201) }, "realmId: realmId must be at most 200 characters"],
  ])("refuses %j with 400: %s", async (override, message) => {
    const response = await postSpend(ctx.server, { ...spendOf("r", "a", 1), ...override });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain(message);
  });

  it("accepts a spend at the bounds: 10^9 tokens each way, 200-character labels", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const fields = {
      inputTokens: 1_000_000_000,
      outputTokens: 1_000_000_000,
      provider: "p".repeat(200),
      model: "m".repeat(200),
      billingCode: "b".repeat(200),
      missionId: "x".repeat(200),
      eventId: "e".repeat(200),
    };
    const response = await postSpend(ctx.server, spendOf(realmId, agentId, 1, fields));
    expect(response.status, await response.clone().text()).toBe(201);
    expect(await json(response)).toMatchObject(fields);
  });

  it("refuses unknown fields on the route with 400 naming them", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const response = await postSpend(
      ctx.server,
      spendOf(realmId, agentId, 3, { sessionId: "s1", colour: "red" }),
    );
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatch(/sessionId|colour/);
  });

  it("counts every one of 100 concurrent spends, on the agent's and the realm's budget", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1_000_000 });
    await setBudget(ctx.server, { realmId, monthlyCents: 1_000_000 });
    const costs = Array.from({ length: 100 }, (_, i) => (i % 7) + 1);
    const responses = await Promise.all(
      costs.map((cost) => postSpend(ctx.server, spendOf(realmId, agentId, cost))),
    );
    expect(responses.map((response) => response.status)).toEqual(costs.map(() => 201));
    const total = costs.reduce((sum, cost) => sum + cost, 0);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(total);
    await setBudget(ctx.server, { realmId, monthlyCents: 2 * total });
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({ scope: "realm", spentCents: total });
    expect(await summary(ctx.server, realmId)).toMatchObject({ totalCents: total, eventCount: 100 });
  });

  it("loses no update when 100 in-process spends interleave (engine.trigger, no HTTP in between)", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1_000_000 });
    await setBudget(ctx.server, { realmId, monthlyCents: 1_000_000 });
    const { engine } = ctx.server.service;
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        engine.trigger({ function_id: "ledger::spend", payload: spendOf(realmId, agentId, i + 0.5) }),
      ),
    );
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(5000);
    expect(await summary(ctx.server, realmId)).toMatchObject({ totalCents: 5000, eventCount: 100 });
  });

  it("counts a spend delivered many times at once exactly once, and answers every delivery with it", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1000 });
    const { engine } = ctx.server.service;
    const payload = { ...spendOf(realmId, agentId, 3), eventId: "evt-many-times" };
    const answers = (await Promise.all(
      Array.from({ length: 20 }, () => engine.trigger({ function_id: "ledger::spend", payload })),
    )) as Array<{ id: string }>;
    expect(new Set(answers.map((answer) => answer.id)).size).toBe(1);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(3);
    expect(await summary(ctx.server, realmId)).toMatchObject({ totalCents: 3, eventCount: 1 });
    expect(await storedEvents(ctx.server, realmId)).toHaveLength(1);
  });

  it("counts spends arriving together in arrival order: those within the hard limit, then refusals", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 10 });
    const { engine } = ctx.server.service;
    const outcomes = await Promise.all(
      [4, 4, 4, 1].map((cents) =>
        engine.trigger({ function_id: "ledger::spend", payload: spendOf(realmId, agentId, cents) }).then(
          () => 201,
          (error: { status: number }) => error.status,
        ),
      ),
    );
    expect(outcomes).toEqual([201, 201, 402, 201]);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(9);
  });

  it("lets no concurrent spend slip past a hard limit (over HTTP and in-process at once)", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 500 });
    const { engine } = ctx.server.service;
    const statuses = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const body = spendOf(realmId, agentId, 7);
        if (i % 2) return (await postSpend(ctx.server, body)).status;
        return engine.trigger({ function_id: "ledger::spend", payload: body }).then(
          () => 201,
          (error: { status: number }) => error.status,
        );
      }),
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(71);
    expect(statuses.filter((status) => status === 402)).toHaveLength(29);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(497);
    expect(await summary(ctx.server, realmId)).toMatchObject({ totalCents: 497, eventCount: 71 });
  });
});

describe("ledger::spend over a hard limit", () => {
  it("refuses with 402, alerts, tells the council, and records the event as rejected without counting it", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 60))).status).toBe(201);
    const refused = await postSpend(ctx.server, spendOf(realmId, agentId, 50));
    expect(refused.status).toBe(402);
    const message = `agent ${agentId} exceeded budget: 110/100`;
    expect(await json(refused)).toEqual({ error: message });
    const hard = await eventually(() =>
      ctx.probes.alerts.filter((alert) => alert.type === "hard_limit_reached"),
    );
    expect(hard).toEqual([
      { type: "hard_limit_reached", realmId, agentId, spentCents: 110, limitCents: 100 },
    ]);
    expect(ctx.probes.activity).toEqual([
      {
        realmId,
        actorKind: "system",
        actorId: "ledger",
        action: "budget_exceeded",
        entityType: "agent",
        entityId: agentId,
        details: { spentCents: 110, limitCents: 100 },
      },
    ]);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(60);
    expect(await summary(ctx.server, realmId)).toMatchObject({ totalCents: 60, eventCount: 1 });
    const events = await storedEvents(ctx.server, realmId);
    expect(events.map((event) => event.status).sort()).toEqual(["accepted", "rejected"]);
    expect(events.find((event) => event.status === "rejected")).toMatchObject({
      costCents: 50,
      reason: message,
    });
    // Exactly at the limit is allowed; anything past it is not.
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 40))).status).toBe(201);
  });

  it("refuses a fraction of a cent past the limit, reporting it to 6 places", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 99.5))).status).toBe(201);
    const refused = await postSpend(ctx.server, spendOf(realmId, agentId, 0.500001));
    expect(refused.status).toBe(402);
    expect((await json(refused)).error).toBe(`agent ${agentId} exceeded budget: 100.000001/100`);
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 0.5))).status).toBe(201);
  });

  it("undoes the agent's charge when the realm budget refuses, and reports the realm's figures", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1000, softThreshold: 0.01 });
    await setBudget(ctx.server, { realmId, monthlyCents: 30 });
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 5))).status).toBe(201);
    const refused = await postSpend(ctx.server, spendOf(realmId, agentId, 26));
    expect(refused.status).toBe(402);
    expect((await json(refused)).error).toBe(`agent ${agentId} exceeded budget: 31/30`);
    const agentOnly = await ctx.server.service.engine.trigger({
      function_id: "state::get",
      payload: { scope: `ledger_budgets:${realmId}`, key: `agent:${agentId}` },
    });
    expect(agentOnly).toMatchObject({ spentCents: 5 });
    // The refused spend had claimed the agent's soft alert; the refund released it unsent.
    expect(agentOnly).not.toHaveProperty("softAlert");
    await eventually(() => ctx.probes.alerts.length === 1);
    expect(ctx.probes.alerts.map((alert) => alert.type)).toEqual(["hard_limit_reached"]);
  });

  it("runs without a council worker (the probe absent) and still refuses", async () => {
    ctx.server.service.engine.unregisterFunction("council::activity");
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, monthlyCents: 1 });
    const refused = await postSpend(ctx.server, spendOf(realmId, agentId, 2));
    expect(refused.status).toBe(402);
    expect((await json(refused)).error).toBe(`agent ${agentId} exceeded budget: 2/1`);
  });
});

describe("soft_threshold", () => {
  it("is published once per budget per period, by the spend that first reaches the threshold", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100, softThreshold: 0.5 });
    for (const cost of [40, 20, 10])
      expect((await postSpend(ctx.server, spendOf(realmId, agentId, cost))).status).toBe(201);
    const soft = await eventually(() => ctx.probes.alerts.filter((alert) => alert.type === "soft_threshold"));
    expect(soft).toEqual([
      { type: "soft_threshold", realmId, agentId, spentCents: 60, limitCents: 100, utilizationPct: 60 },
    ]);
  });

  it("is published exactly once when concurrent spends cross the threshold together", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, monthlyCents: 100, softThreshold: 0.5, hardLimit: false });
    await Promise.all(Array.from({ length: 30 }, () => postSpend(ctx.server, spendOf(realmId, agentId, 3))));
    await eventually(() => ctx.probes.alerts.length > 0);
    const soft = ctx.probes.alerts.filter((alert) => alert.type === "soft_threshold");
    expect(soft).toHaveLength(1);
    expect(soft[0]).toMatchObject({ spentCents: 51, utilizationPct: 51 });
  });

  it("is re-armed when a re-budget takes utilization back under the threshold", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    await postSpend(ctx.server, spendOf(realmId, agentId, 85));
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 200 });
    await postSpend(ctx.server, spendOf(realmId, agentId, 80));
    const soft = await eventually(() => {
      const found = ctx.probes.alerts.filter((alert) => alert.type === "soft_threshold");
      return found.length === 2 && found;
    });
    expect(soft.map((alert: JsonBody) => alert.limitCents)).toEqual([100, 200]);
  });
});
