import { rmSync } from "node:fs";
import { expect, it } from "vitest";
import { call, createAgent, createRealm } from "../../helpers/control-plane.ts";
import { startTestServer } from "../../helpers/server.ts";

it("indexes and counts agents stored before the realm index existed, once, at the next start", async () => {
  const first = await startTestServer();
  const realm = await createRealm(first, { maxAgents: 2 });
  const trigger = first.service.engine.trigger.bind(first.service.engine);
  const now = new Date().toISOString();
  // An agent as stored before this change: only its record in scope `agents`, no index, no count.
  await trigger({
    function_id: "state::set",
    payload: {
      scope: "agents",
      key: "agent-legacy",
      value: {
        id: "agent-legacy",
        name: "legacy",
        model: "gpt-4o",
        tools: [],
        toolProfile: "chat",
        realmId: realm.id,
        status: "active",
        createdAt: now,
        updatedAt: now,
      },
    },
  });
  await trigger({ function_id: "state::delete", payload: { scope: "agents_meta", key: "realm_index_v3" } });
  await first.service.close();

  const second = await startTestServer({ dataDir: first.dataDir });
  try {
    const listed = await call(second, "GET", `/api/agents?realmId=${realm.id}`);
    expect(listed.body.agents.map((a: { id: string }) => a.id)).toEqual(["agent-legacy"]);
    const all = await call(second, "GET", "/api/agents?limit=500");
    expect(all.body.agents.map((a: { id: string }) => a.id)).toContain("agent-legacy");
    // And by name, through the name index /v1 model lookups use.
    const resolved = await second.service.engine.trigger({
      function_id: "agent::resolve",
      payload: { model: "legacy" },
    });
    expect(resolved).toEqual({ agentId: "agent-legacy" });
    await createAgent(second, realm.id, { name: "new" });
    expect((await call(second, "POST", "/api/agents", { name: "x", realmId: realm.id })).status).toBe(409);
    expect((await call(second, "DELETE", "/api/agents/agent-legacy")).status).toBe(204);
    await createAgent(second, realm.id, { name: "newer" });
  } finally {
    await second.close();
    rmSync(first.dataDir, { recursive: true, force: true });
  }
});
