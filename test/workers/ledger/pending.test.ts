import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { createAgentOS } from "../../../src/app.ts";
import { loadConfig } from "../../../src/config/env.ts";
import { type JsonBody, json, type TestServer } from "../../helpers/server.ts";
import { check, ledgerServer, realmWithAgent, setBudget, spendOf } from "./setup.ts";

const ctx = ledgerServer();
const PENDING = "ledger_pending";

type Trigger = TestServer["service"]["engine"]["trigger"];
type Service = TestServer["service"];

const triggerOf =
  (service: Service): Trigger =>
  (request) =>
    service.engine.trigger(request);

const recordCost = (trigger: Trigger, payload: Record<string, unknown>) =>
  trigger({ function_id: "ledger::record_cost", payload }) as Promise<JsonBody>;

async function listed(trigger: Trigger, scope: string): Promise<JsonBody[]> {
  const page = (await trigger({ function_id: "state::list", payload: { scope, limit: 1000 } })) as {
    items: Array<{ value: JsonBody }>;
  };
  return page.items.map((item) => item.value);
}

const summaryOf = async (server: TestServer, realmId: string) =>
  json(await server.request(`/api/ledger/summary/${realmId}`));

/** A service on its own data directory, to be stopped and started again on it. */
const openService = (dataDir: string) =>
  createAgentOS({
    ...loadConfig({ AGENTOS_DATA_DIR: dataDir, AGENTOS_LOG_LEVEL: "silent" }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
  });

/** A cost left in the pending scope by a process that died before counting it. */
function leftPending(trigger: Trigger, input: Record<string, unknown>, queuedAt: number) {
  return trigger({
    function_id: "state::set",
    payload: { scope: PENDING, key: `${input.realmId}/${input.eventId}`, value: { input, queuedAt } },
  });
}

describe("ledger::record_cost (a model call's cost, counted just after it is taken)", () => {
  it("answers once the cost is stored, and the summary and the budget count it, without its extra fields", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1000 });
    const trigger = triggerOf(ctx.server.service);
    const answer = await recordCost(
      trigger,
      spendOf(realmId, agentId, 3, { sessionId: "s1", cost: 0.03, at: new Date().toISOString() }),
    );
    expect(answer).toEqual({ eventId: expect.any(String), status: "queued" });
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(3);
    expect(await summaryOf(ctx.server, realmId)).toMatchObject({ totalCents: 3, eventCount: 1 });
    const [event] = await listed(trigger, `ledger_spend:${realmId}`);
    expect(event).toMatchObject({ status: "accepted", eventId: answer.eventId, costCents: 3 });
    expect(event).not.toHaveProperty("sessionId");
    expect(event).not.toHaveProperty("cost");
    expect(await listed(trigger, PENDING)).toEqual([]);
  });

  it("counts a cost delivered several times with one eventId once", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const trigger = triggerOf(ctx.server.service);
    const cost = spendOf(realmId, agentId, 4, { eventId: "evt-twice" });
    await Promise.all([recordCost(trigger, cost), recordCost(trigger, cost)]);
    await recordCost(trigger, cost);
    expect(await summaryOf(ctx.server, realmId)).toMatchObject({ totalCents: 4, eventCount: 1 });
  });

  it("counts an incurred cost even past a hard limit, which then refuses, without failing the call that incurred it", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 5, hardLimit: true });
    const trigger = triggerOf(ctx.server.service);
    expect((await recordCost(trigger, spendOf(realmId, agentId, 4))).status).toBe("queued");
    // More than the budget has left: a call already answered is counted, or it would have been free.
    expect((await recordCost(trigger, spendOf(realmId, agentId, 150))).status).toBe("queued");
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({ spentCents: 154, allowed: false });
    expect(await summaryOf(ctx.server, realmId)).toMatchObject({ totalCents: 154, eventCount: 2 });
    const events = await listed(trigger, `ledger_spend:${realmId}`);
    expect(events.map((event) => event.status)).toEqual(["accepted", "accepted"]);
    expect(await listed(trigger, PENDING)).toEqual([]);
    const log = await ctx.server.service.engine.trigger({
      function_id: "council::log",
      payload: { realmId },
    });
    expect(JSON.stringify(log)).toContain("budget_exceeded");
  });

  it("refuses a realm-bound key's cost for another realm as not found (404) and stores nothing", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const other = await realmWithAgent(ctx.server);
    const trigger = triggerOf(ctx.server.service);
    const auth = { kind: "realm", realmId: other.realmId, keyId: "key_other" } as const;
    await expect(
      trigger({ function_id: "ledger::record_cost", payload: spendOf(realmId, agentId, 2), auth }),
    ).rejects.toMatchObject({ status: 404 });
    expect(await listed(trigger, PENDING)).toEqual([]);
  });
});

describe("the pending sweep", () => {
  it("counts a cost a dead process left pending once it is stale, and leaves fresh ones to their process", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const trigger = triggerOf(ctx.server.service);
    await leftPending(trigger, spendOf(realmId, agentId, 6, { eventId: "evt-stale" }), Date.now() - 60_000);
    await leftPending(trigger, spendOf(realmId, agentId, 9, { eventId: "evt-fresh" }), Date.now());
    expect(await trigger({ function_id: "ledger::sweep_pending", payload: {} })).toEqual({ taken: 1 });
    expect(await summaryOf(ctx.server, realmId)).toMatchObject({ totalCents: 6, eventCount: 1 });
    expect((await listed(trigger, PENDING)).map((row) => (row.input as JsonBody).eventId)).toEqual([
      "evt-fresh",
    ]);
  });

  it("drops a pending cost whose realm is gone, and one that is not a cost at all", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const trigger = triggerOf(ctx.server.service);
    const old = Date.now() - 60_000;
    await leftPending(trigger, spendOf("realm-gone", agentId, 6, { eventId: "evt-gone" }), old);
    await leftPending(trigger, { realmId, eventId: "evt-garbage", costCents: "lots" }, old);
    await trigger({ function_id: "ledger::sweep_pending", payload: {} });
    await expect.poll(() => listed(trigger, PENDING)).toEqual([]);
    expect(await summaryOf(ctx.server, realmId)).toMatchObject({ totalCents: 0 });
  });

  it("counts the costs it took before a service stops: nothing is left pending", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ledger-stop-"));
    try {
      const service = await openService(dataDir);
      const cost = spendOf("realm-default", "agent-1", 5, { eventId: "evt-stop" });
      await triggerOf(service)({ function_id: "ledger::record_cost", payload: cost });
      await service.close();
      const db = new DatabaseSync(join(dataDir, "agentos.db"));
      try {
        const count = (scope: string) =>
          (db.prepare("SELECT count(*) AS n FROM state WHERE scope = ?").get(scope) as { n: number }).n;
        expect(count(PENDING)).toBe(0);
        expect(count("ledger_spend:realm-default")).toBe(1);
      } finally {
        db.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("counts every cost left pending at the next start of the service, however fresh", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ledger-pending-"));
    const open = () => openService(dataDir);
    try {
      const first = await open();
      const realmId = "realm-default";
      await leftPending(triggerOf(first), spendOf(realmId, "agent-1", 5, { eventId: "evt-a" }), Date.now());
      await leftPending(triggerOf(first), spendOf(realmId, "agent-1", 7, { eventId: "evt-b" }), Date.now());
      await first.close();
      const second = await open();
      try {
        const summary = (await triggerOf(second)({
          function_id: "ledger::summary",
          payload: { realmId },
        })) as JsonBody;
        expect(summary).toMatchObject({ totalCents: 12, eventCount: 2 });
        expect(await listed(triggerOf(second), PENDING)).toEqual([]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
