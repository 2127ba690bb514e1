import { describe, expect, it } from "vitest";
import { archiveRealm, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { check, ledgerServer, postSpend, setBudget, spendOf } from "./setup.ts";

const ctx = ledgerServer();

describe("with the realm worker", () => {
  it("answers 404 for a realm that does not exist", async () => {
    const missing = "realm-00000000-0000-4000-8000-000000000000";
    for (const [path, method, body] of [
      ["/api/ledger/budget", "POST", { realmId: missing, monthlyCents: 1 }],
      [`/api/ledger/check/${missing}/agent-1`, "GET", undefined],
      ["/api/ledger/spend", "POST", spendOf(missing, "agent-1", 1)],
      [`/api/ledger/summary/${missing}`, "GET", undefined],
    ] as const) {
      const response = await ctx.server.request(path, { method, json: body });
      expect(response.status, `${method} ${path}`).toBe(404);
    }
  });

  it("keeps an archived realm's budgets read-only but still records its spends", async () => {
    const realmId = await newRealm(ctx.server);
    const agentId = await createAgent(ctx.server, realmId);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    await archiveRealm(ctx.server, realmId);
    const refused = await ctx.server.request("/api/ledger/budget", {
      method: "POST",
      json: { realmId, agentId, monthlyCents: 200 },
    });
    expect(refused.status).toBe(409);
    expect((await postSpend(ctx.server, spendOf(realmId, agentId, 5))).status).toBe(201);
    expect((await check(ctx.server, realmId, agentId)).spentCents).toBe(5);
  });

  it("is purged with the realm: a realm delete leaves no ledger records behind", async () => {
    const realmId = await newRealm(ctx.server);
    const agentId = await createAgent(ctx.server, realmId);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 100 });
    await postSpend(ctx.server, spendOf(realmId, agentId, 5, { eventId: "once" }));
    const deleted = await ctx.server.request(`/api/realms/${realmId}`, { method: "DELETE" });
    expect(deleted.ok, await deleted.clone().text()).toBe(true);
    for (const scope of ["ledger_budgets", "ledger_spend", "ledger_totals", "ledger_event_ids"]) {
      const page = (await ctx.server.service.engine.trigger({
        function_id: "state::list",
        payload: { scope: `${scope}:${realmId}` },
      })) as { items: unknown[] };
      expect(page.items, scope).toEqual([]);
    }
  });
});
