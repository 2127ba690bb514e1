import { describe, expect, it } from "vitest";
import { call, createAgent, markRealmDeleting, realmKey } from "../../helpers/control-plane.ts";
import { json } from "../../helpers/server.ts";
import { check, ledgerServer, postSpend, realmWithAgent, setBudget, spendOf } from "./setup.ts";

const ctx = ledgerServer();

const SCOPES = ["ledger_budgets", "ledger_spend", "ledger_totals", "ledger_event_ids"];

/** Every ledger record of a realm, by scope. */
async function ledgerRecords(realmId: string): Promise<Record<string, unknown[]>> {
  const records: Record<string, unknown[]> = {};
  for (const scope of SCOPES) {
    const page = (await ctx.server.service.engine.trigger({
      function_id: "state::list",
      payload: { scope: `${scope}:${realmId}`, limit: 1000 },
    })) as { items: unknown[] };
    records[scope] = page.items;
  }
  return records;
}

const NONE = Object.fromEntries(SCOPES.map((scope) => [scope, []]));

describe("the realm-wide budget is the operator's", () => {
  it("refuses a realm-bound key any realm-wide budget change (403), but lets it set its agents' budgets", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, monthlyCents: 10, hardLimit: true });
    const key = await realmKey(ctx.server, realmId);
    for (const body of [
      { realmId, monthlyCents: 1_000_000 },
      { realmId, monthlyCents: 10, hardLimit: false },
      { realmId, monthlyCents: 10, softThreshold: 1 },
    ]) {
      const refused = await call(ctx.server, "POST", "/api/ledger/budget", body, key);
      expect(refused, JSON.stringify(body)).toEqual({
        status: 403,
        body: { error: "The realm-wide budget can only be set with an admin key" },
      });
    }
    const own = await call(
      ctx.server,
      "POST",
      "/api/ledger/budget",
      { realmId, agentId, monthlyCents: 1000 },
      key,
    );
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ agentId, monthlyCents: 1000 });

    // Both apply: the agent's generous budget does not lift the realm's cap.
    const refused = await call(ctx.server, "POST", "/api/ledger/spend", spendOf(realmId, agentId, 11), key);
    expect(refused).toEqual({ status: 402, body: { error: `agent ${agentId} exceeded budget: 11/10` } });
    expect(await check(ctx.server, realmId, agentId)).toMatchObject({ allowed: true, spentCents: 0 });
    const realmBudget = await ctx.server.service.engine.trigger({
      function_id: "state::get",
      payload: { scope: `ledger_budgets:${realmId}`, key: "realm" },
    });
    expect(realmBudget).toMatchObject({ monthlyCents: 10, hardLimit: true });
  });
});

describe("a realm being deleted (deleting: true on its record)", () => {
  it("takes no spends (409) and keeps no record of them", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await markRealmDeleting(ctx.server, realmId);
    for (const body of [spendOf(realmId, agentId, 5), spendOf(realmId, agentId, 5, { eventId: "evt-1" })]) {
      const response = await postSpend(ctx.server, body);
      expect(response.status).toBe(409);
      expect(await json(response)).toEqual({ error: `Realm ${realmId} is being deleted` });
    }
    expect(await ledgerRecords(realmId)).toEqual(NONE);
  });

  it("takes no budgets, realm-wide or per agent (409)", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await markRealmDeleting(ctx.server, realmId);
    for (const body of [
      { realmId, monthlyCents: 10 },
      { realmId, agentId, monthlyCents: 10 },
    ]) {
      expect(await call(ctx.server, "POST", "/api/ledger/budget", body)).toEqual({
        status: 409,
        body: { error: `Realm ${realmId} is being deleted` },
      });
    }
    expect(await ledgerRecords(realmId)).toEqual(NONE);
  });

  it("leaves nothing behind from a spend that read the realm just before its delete purged the ledger", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1000 });
    const { engine } = ctx.server.service;
    const original = engine.functions.get("realm::get");
    if (!original) throw new Error("no realm worker");
    let armed = true;
    // The delete starts (marker, then the ledger's purge) right after the spend has read the realm.
    engine.worker("race").registerFunction({ id: "realm::get" }, async (input, context) => {
      const realm = await original.handler(input, context);
      if (armed && (input as { id?: string }).id === realmId) {
        armed = false;
        await markRealmDeleting(ctx.server, realmId);
        await engine.trigger({ function_id: "ledger::purge_realm", payload: { realmId } });
      }
      return realm;
    });
    const response = await postSpend(ctx.server, spendOf(realmId, agentId, 5, { eventId: "late" }));
    expect(armed).toBe(false);
    expect(response.status).toBe(409);
    expect(await json(response)).toEqual({ error: `Realm ${realmId} is being deleted` });
    expect(await ledgerRecords(realmId)).toEqual(NONE);
  });
});

describe("ledger::purge_agent (part of an agent delete)", () => {
  it("deletes the agent's budget on agent delete; spend history, totals and the realm budget stay", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    const other = await createAgent(ctx.server, realmId, { name: "other" });
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    await setBudget(ctx.server, { realmId, agentId: other, monthlyCents: 100 });
    await setBudget(ctx.server, { realmId, monthlyCents: 1000 });
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 7))).status).toBe(201);

    expect((await call(ctx.server, "DELETE", `/api/agents/${agentId}`)).status).toBe(204);

    const records = await ledgerRecords(realmId);
    expect((records.ledger_budgets as Array<{ key: string }>).map((item) => item.key).sort()).toEqual(
      [`agent:${other}`, "realm"].sort(),
    );
    expect(records.ledger_spend).toHaveLength(1);
    const summary = await call(ctx.server, "GET", `/api/ledger/summary/${realmId}`);
    expect(summary.body).toMatchObject({ totalCents: 7, eventCount: 1, breakdown: { [agentId]: 7 } });
    // The realm's budget still counts what the deleted agent spent.
    expect(await check(ctx.server, realmId, other)).toMatchObject({ scope: "realm", spentCents: 7 });
  });

  it("is idempotent and answers what it deleted", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    const purge = () =>
      ctx.server.service.engine.trigger({
        function_id: "ledger::purge_agent",
        payload: { realmId, agentId },
      });
    expect(await purge()).toEqual({ realmId, agentId, deleted: 1 });
    expect(await purge()).toEqual({ realmId, agentId, deleted: 0 });
  });
});

describe("ledger purges are internal cascade steps", () => {
  it("refuses purge_realm and purge_agent to a realm-bound caller (403), even for its own realm", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    const auth = { kind: "realm" as const, realmId, keyId: "k" };
    for (const [function_id, payload] of [
      ["ledger::purge_realm", { realmId }],
      ["ledger::purge_agent", { realmId, agentId }],
    ] as const) {
      await expect(
        ctx.server.service.engine.trigger({ function_id, payload, auth }),
        function_id,
      ).rejects.toMatchObject({ status: 403 });
    }
    expect((await ledgerRecords(realmId)).ledger_budgets).toHaveLength(1);
  });
});
