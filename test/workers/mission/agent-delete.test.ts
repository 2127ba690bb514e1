import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemPrincipal } from "../../../src/engine/types.ts";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

/** A checkout racing its agent's delete: the delete's purge puts the agent's work back in the queue. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const trigger = (function_id: string, payload: unknown) =>
  server.service.engine.trigger({ function_id, payload, auth: systemPrincipal });

describe("a checkout racing its agent's delete", () => {
  it("gives the mission back when the delete marked the agent and purged its missions after the check", async () => {
    const realmId = await newRealm(server, "race");
    const key = await realmKey(server, realmId);
    const agentId = await createAgent(server, realmId);
    const mission = await call(server, "POST", "/api/missions", { realmId, title: "t", createdBy: "x" }, key);
    const { engine } = server.service;
    const original = engine.functions.get("agent::get");
    if (!original) throw new Error("no agents worker");
    let armed = true;
    // The agent delete begins (marker, then the missions' purge) right after the checkout read the agent.
    engine.worker("race").registerFunction({ id: "agent::get" }, async (input, context) => {
      const agent = await original.handler(input, context);
      if (armed && (input as { id?: string }).id === agentId) {
        armed = false;
        const stored = await trigger("state::get", { scope: "agents", key: agentId });
        await trigger("state::set", {
          scope: "agents",
          key: agentId,
          value: { ...(stored as object), status: "deleting" },
        });
        await trigger("mission::purge_agent", { realmId, agentId });
      }
      return agent;
    });
    const checkout = await call(
      server,
      "POST",
      `/api/missions/${realmId}/${mission.body.id}/checkout`,
      { agentId },
      key,
    );
    expect(armed).toBe(false);
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(404);
    const read = await call(server, "GET", `/api/missions/${realmId}/${mission.body.id}`, undefined, key);
    expect(read.body).toMatchObject({ status: "queued", assigneeId: null });
  });
});
