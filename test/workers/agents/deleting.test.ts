import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentPrincipal } from "../../../src/engine/acting-agent.ts";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

/**
 * An agent delete marks the agent `deleting` before the other workers purge it, so nothing can attach
 * new records to it (org chart node, pulse, budget) while, or after, its records are purged.
 */
let server: TestServer;
beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.close();
});

/** Makes every agent delete fail in its purge step while `failing.now` is true. */
function flakyAgentPurge(): { now: boolean } {
  const failing = { now: true };
  server.service.engine.worker("flaky").registerFunction({ id: "flaky::purge_agent" }, () => {
    if (failing.now) throw new Error("flaky store is down");
    return { purged: true };
  });
  return failing;
}

async function storedAgent(agentId: string): Promise<Record<string, unknown> | null> {
  return (await server.service.engine.trigger({
    function_id: "state::get",
    payload: { scope: "agents", key: agentId },
  })) as Record<string, unknown> | null;
}

describe("an agent being deleted", () => {
  it("is marked deleting first; a failed delete leaves it marked, and a retry finishes it", async () => {
    const realmId = await newRealm(server);
    const agentId = await createAgent(server, realmId);
    const failing = flakyAgentPurge();

    expect((await call(server, "DELETE", `/api/agents/${agentId}`)).status).toBe(500);
    expect((await storedAgent(agentId))?.status).toBe("deleting");
    const read = await call(server, "GET", `/api/agents/${agentId}`);
    expect(read.status).toBe(200);
    expect(read.body.status).toBe("deleting");

    failing.now = false;
    expect((await call(server, "DELETE", `/api/agents/${agentId}`)).status).toBe(204);
    expect((await call(server, "GET", `/api/agents/${agentId}`)).status).toBe(404);
    expect(await storedAgent(agentId)).toBeNull();
  });

  it("reads as missing (404) to hierarchy::set, pulse::register and agent budgets; takes no messages (409)", async () => {
    const realmId = await newRealm(server);
    const agentId = await createAgent(server, realmId);
    flakyAgentPurge();
    expect((await call(server, "DELETE", `/api/agents/${agentId}`)).status).toBe(500);

    const notFound = `Agent ${agentId} not found in realm ${realmId}`;
    const set = await call(server, "POST", "/api/hierarchy", { realmId, agentId, title: "Lead" });
    expect(set).toEqual({ status: 404, body: { error: notFound } });
    const budget = await call(server, "POST", "/api/ledger/budget", { realmId, agentId, monthlyCents: 5 });
    expect(budget).toEqual({ status: 404, body: { error: notFound } });
    const pulse = await call(server, "POST", "/api/pulse/register", {
      realmId,
      agentId,
      cron: "0 0 * * * *",
    });
    expect(pulse.status).toBe(404);
    const message = await call(server, "POST", `/api/agents/${agentId}/message`, { message: "hi" });
    expect(message.status).toBe(409);
    expect((await call(server, "GET", `/api/hierarchy/${realmId}/tree`)).body.roots).toEqual([]);
  });

  it("is refused by hierarchy::set when the marker is set directly in state", async () => {
    const realmId = await newRealm(server);
    const agentId = await createAgent(server, realmId);
    const agent = await storedAgent(agentId);
    await server.service.engine.trigger({
      function_id: "state::set",
      payload: { scope: "agents", key: agentId, value: { ...agent, status: "deleting" } },
    });
    const set = await call(server, "POST", "/api/hierarchy", { realmId, agentId });
    expect(set.status).toBe(404);
  });
});

describe("an agent deleted by another agent of its realm", () => {
  it("is deleted whole, its memory too, rather than left marked deleting", async () => {
    const realmId = await newRealm(server);
    const actor = await createAgent(server, realmId, { name: "janitor" });
    const target = await createAgent(server, realmId, { name: "temp" });
    await server.service.engine.trigger({
      function_id: "memory::store",
      payload: { agentId: target, content: "a note of its own" },
    });
    await server.service.engine.trigger({
      function_id: "agent::delete",
      payload: { id: target },
      auth: agentPrincipal({ id: actor, realmId }),
    });
    expect(await storedAgent(target)).toBeNull();
    expect((await call(server, "GET", `/api/agents/${target}`)).status).toBe(404);
  });
});
