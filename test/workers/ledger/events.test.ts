import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { eventually, sleep } from "../../helpers/iii.ts";
import { json, type TestServer } from "../../helpers/server.ts";
import { check, ledgerServer, postSpend, realmWithAgent, setBudget, spendOf } from "./setup.ts";

const ctx = ledgerServer();

const eventCount = async (server: TestServer, realmId: string) =>
  (await json(await server.request(`/api/ledger/summary/${realmId}`))).eventCount;

function publishCost(server: TestServer, data: Record<string, unknown>): Promise<unknown> {
  return server.service.engine.trigger({ function_id: "publish", payload: { topic: "cost.incurred", data } });
}

describe("idempotent spends (eventId)", () => {
  it("counts an eventId once and answers a repeat with the first event (the eventId is kept for tracing)", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1000 });
    const eventId = randomUUID();
    const first = await json(await postSpend(ctx.server, spendOf(realmId, agentId, 9, { eventId })));
    expect(first).toMatchObject({
      id: expect.stringMatching(/^spn-[0-9a-f-]{36}$/),
      eventId,
      status: "accepted",
    });
    expect(first.id).not.toBe(`spn-${eventId}`);
    const again = await postSpend(ctx.server, spendOf(realmId, agentId, 9, { eventId }));
    expect(again.status).toBe(201);
    expect(await json(again)).toEqual(first);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(9);
    expect(await eventCount(ctx.server, realmId)).toBe(1);
  });

  it("never lets a spend's eventId take the id of another stored spend", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const plain = await json(await postSpend(ctx.server, spendOf(realmId, agentId, 2)));
    expect(plain.id).toMatch(/^spn-[0-9a-f-]{36}$/);
    // A later spend whose eventId is the uuid inside the first one's id is another spend.
    const eventId = plain.id.slice("spn-".length);
    const later = await json(await postSpend(ctx.server, spendOf(realmId, agentId, 3, { eventId })));
    expect(later).toMatchObject({ eventId, status: "accepted", costCents: 3 });
    expect(later.id).not.toBe(plain.id);
    const page = (await ctx.server.service.engine.trigger({
      function_id: "state::list",
      payload: { scope: `ledger_spend:${realmId}`, limit: 100 },
    })) as { items: Array<{ value: { id: string; costCents: number } }> };
    expect(page.items.map((item) => item.value).sort((a, b) => a.costCents - b.costCents)).toEqual([
      plain,
      later,
    ]);
    expect(await eventCount(ctx.server, realmId)).toBe(2);
  });

  it("gives an eventId that is not a uuid a fresh spend id, and still counts it once under concurrency", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, monthlyCents: 1000 });
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        postSpend(ctx.server, spendOf(realmId, agentId, 4, { eventId: "call.42" })),
      ),
    );
    const events = await Promise.all(responses.map((response) => json(response)));
    expect(new Set(events.map((event) => event.id)).size).toBe(1);
    expect(events[0].id).toMatch(/^spn-[0-9a-f-]{36}$/);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(4);
    expect(await eventCount(ctx.server, realmId)).toBe(1);
  });

  it("replays a refusal for a repeated eventId without alerting again", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 10 });
    const body = spendOf(realmId, agentId, 11, { eventId: randomUUID() });
    for (let i = 0; i < 2; i++) {
      const refused = await postSpend(ctx.server, body);
      expect(refused.status).toBe(402);
      expect((await json(refused)).error).toBe(`agent ${agentId} exceeded budget: 11/10`);
    }
    await sleep(50);
    expect(ctx.probes.alerts).toHaveLength(1);
    expect(ctx.probes.activity).toHaveLength(1);
  });

  it("frees the eventId when the spend fails before counting, so a retry counts", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    const restore = failBudgetReads(ctx.server);
    const eventId = randomUUID();
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 5, { eventId }))).status).toBe(500);
    restore();
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(0);
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 5, { eventId }))).status).toBe(201);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(5);
  });
});

/** Makes every read of a budget fail (a storage fault) until the returned function is called. */
function failBudgetReads(server: TestServer): () => void {
  const { functions } = server.service.engine;
  const original = functions.get("state::get");
  if (!original) throw new Error("state::get is not registered");
  functions.add({
    ...original,
    handler: (input, context) => {
      if ((input as { scope: string }).scope.startsWith("ledger_budgets:")) throw new Error("disk on fire");
      return original.handler(input, context);
    },
  });
  return () => functions.add(original);
}

describe("cost.incurred subscription", () => {
  it("counts a published cost, once however often it is delivered", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1000 });
    const message = {
      ...spendOf(realmId, agentId, 2.5),
      eventId: randomUUID(),
      sessionId: "session-1",
      cost: 0.025,
      at: new Date().toISOString(),
    };
    // As on a cluster, where every node's subscriber receives the message.
    await Promise.all([publishCost(ctx.server, message), publishCost(ctx.server, message)]);
    await eventually(async () => (await check(ctx.server, realmId, agentId)).spentCents === 2.5);
    await sleep(50);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(2.5);
    expect(await eventCount(ctx.server, realmId)).toBe(1);
  });

  it("leaves a message marked recorded (its publisher recorded it already) and counts the next one", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1000 });
    const message = (cents: number) => ({ ...spendOf(realmId, agentId, cents), eventId: randomUUID() });
    await publishCost(ctx.server, { ...message(4), recorded: true });
    await publishCost(ctx.server, message(1));
    await eventually(async () => (await eventCount(ctx.server, realmId)) === 1);
    await sleep(50);
    expect(await eventCount(ctx.server, realmId)).toBe(1);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(1);
  });
});
