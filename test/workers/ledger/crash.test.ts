import { afterEach, describe, expect, it } from "vitest";
import { makeDataDir, removeDir, type ServeProcess, startServe, stopAll } from "../../helpers/process.ts";
import { json } from "../../helpers/server.ts";
import { ledgerServer, postSpend, realmWithAgent, setBudget, spendOf } from "./setup.ts";

const ctx = ledgerServer();

describe("a spend interrupted by a crash", () => {
  it("is counted exactly once when its eventId is delivered again (a claim left pending)", async () => {
    const { realmId, agentId } = await realmWithAgent(ctx.server);
    await setBudget(ctx.server, { realmId, agentId, monthlyCents: 1000 });
    // What an earlier version left behind when killed between claiming the eventId and charging.
    const pending = { ...spendOf(realmId, agentId, 7), id: "spn-interrupted", status: "pending" };
    await ctx.server.service.engine.trigger({
      function_id: "state::set",
      payload: {
        scope: `ledger_event_ids:${realmId}`,
        key: "evt-1",
        value: { ...pending, eventId: "evt-1" },
      },
    });
    for (let delivery = 0; delivery < 3; delivery++) {
      const response = await postSpend(ctx.server, { ...spendOf(realmId, agentId, 7), eventId: "evt-1" });
      expect(response.status).toBe(201);
      expect((await json(response)).status).toBe("accepted");
    }
    const summary = await json(await ctx.server.request(`/api/ledger/summary/${realmId}`));
    expect(summary).toMatchObject({ totalCents: 7, eventCount: 1 });
    const check = await json(await ctx.server.request(`/api/ledger/check/${realmId}/${agentId}`));
    expect(check.spentCents).toBe(7);
  });
});

const KEY = "ledger-crash-admin-key-0123456789";
const servers: ServeProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await stopAll(servers);
  for (const dir of dirs.splice(0)) removeDir(dir);
});

/** Posts spends with eventIds `from`.. in `lanes` concurrent loops until `stop()`; returns what was sent and acked. */
function load(server: ServeProcess, realmId: string, lanes: number) {
  const sent = new Set<string>();
  const acked = new Set<string>();
  let next = 0;
  let stopped = false;
  const lane = async () => {
    while (!stopped) {
      const eventId = `evt-${next++}`;
      sent.add(eventId);
      try {
        const response = await server.request("/api/ledger/spend", {
          method: "POST",
          key: KEY,
          json: { ...spendOf(realmId, `agent-${next % 3}`, 1), eventId },
        });
        if (response.status === 201) acked.add(eventId);
        else await response.text();
      } catch {
        return; // The server died under us.
      }
    }
  };
  const done = Promise.all(Array.from({ length: lanes }, lane));
  return { sent, acked, done, stop: () => (stopped = true) };
}

describe("kill -9 under load", () => {
  it("loses no acknowledged spend and counts every redelivered one exactly once", async () => {
    const dataDir = makeDataDir();
    dirs.push(dataDir);
    const realmId = "realm-default";
    let server = await startServe({ dataDir, env: { AGENTOS_API_KEY: KEY, AGENTOS_RATE_LIMITS: "off" } });
    servers.push(server);
    const budget = await server.request("/api/ledger/budget", {
      method: "POST",
      key: KEY,
      json: { realmId, monthlyCents: 10_000_000 },
    });
    expect(budget.status).toBe(200);
    const sent = new Set<string>();
    const acked = new Set<string>();
    for (let cycle = 0; cycle < 2; cycle++) {
      const running = load(server, realmId, 16);
      await new Promise((resolve) => setTimeout(resolve, 400 + Math.random() * 400));
      await server.stop("SIGKILL");
      running.stop();
      await running.done;
      for (const id of running.sent) sent.add(id);
      for (const id of running.acked) acked.add(id);
      servers.splice(0);
      server = await startServe({ dataDir, env: { AGENTOS_API_KEY: KEY, AGENTOS_RATE_LIMITS: "off" } });
      servers.push(server);
      // A client retries what it did not see acknowledged; every acknowledged one must already be there.
      const before = await json(await server.request(`/api/ledger/summary/${realmId}`, { key: KEY }));
      expect(before.eventCount).toBeGreaterThanOrEqual(acked.size);
      for (const eventId of sent) {
        const response = await server.request("/api/ledger/spend", {
          method: "POST",
          key: KEY,
          json: { ...spendOf(realmId, "agent-retry", 1), eventId },
        });
        expect(response.status).toBe(201);
        acked.add(eventId);
      }
      const after = await json(await server.request(`/api/ledger/summary/${realmId}`, { key: KEY }));
      expect(after).toMatchObject({ totalCents: sent.size, eventCount: sent.size });
      // The realm budget was charged by exactly the same spends.
      const check = await json(await server.request(`/api/ledger/check/${realmId}/agent-x`, { key: KEY }));
      expect(check).toMatchObject({ scope: "realm", spentCents: sent.size });
    }
    expect(acked.size).toBeGreaterThan(0);
  }, 60_000);
});
