import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

describe("agent delete: the agent leaves the other workers too", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("takes the agent out of the org chart (its reports move up to its manager) and stops its pulse", async () => {
    const realmId = await newRealm(server, "cascade");
    const [boss, middle, report] = await Promise.all(
      ["boss", "middle", "report"].map((name) => createAgent(server, realmId, { name })),
    );
    await call(server, "POST", "/api/hierarchy", { realmId, agentId: boss, title: "CEO" });
    await call(server, "POST", "/api/hierarchy", { realmId, agentId: middle, reportsTo: boss });
    await call(server, "POST", "/api/hierarchy", { realmId, agentId: report, reportsTo: middle });
    const pulse = { realmId, agentId: middle, cron: "0 0 * * * *" };
    expect((await call(server, "POST", "/api/pulse/register", pulse)).status).toBe(200);

    expect((await call(server, "DELETE", `/api/agents/${middle}`)).status).toBe(204);

    const chain = await call(server, "GET", `/api/hierarchy/${realmId}/chain/${report}`);
    expect(chain.body.chain.map((node: { agentId: string }) => node.agentId)).toEqual([report, boss]);
    expect((await call(server, "GET", `/api/pulse/${realmId}/${middle}`)).status).toBe(404);
    const triggers = server.service.engine.triggers
      .list()
      .filter((trigger) => trigger.function_id === "pulse::tick");
    expect(triggers).toEqual([]);
  });

  it("deletes an agent that was never in the chart or scheduled", async () => {
    const realmId = await newRealm(server, "plain");
    const agentId = await createAgent(server, realmId, { name: "loner" });
    expect((await call(server, "DELETE", `/api/agents/${agentId}`)).status).toBe(204);
    expect((await call(server, "GET", `/api/agents/${agentId}`)).status).toBe(404);
  });
});
