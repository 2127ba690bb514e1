import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { archiveRealm, call, createAgent, markRealmDeleting, newRealm } from "../../helpers/control-plane.ts";
import { holdCalls, until } from "../../helpers/races.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.close();
});

async function swarmOf(realmId: string): Promise<{ swarmId: string; agentId: string }> {
  const agentId = await createAgent(server, realmId);
  const created = await call(server, "POST", "/api/swarm/create", {
    realmId,
    goal: "g",
    agentIds: [agentId],
  });
  expect(created.status).toBe(201);
  return { swarmId: created.body.swarmId, agentId };
}

describe("a swarm of a read-only realm", () => {
  for (const [state, make, error] of [
    ["archived", archiveRealm, (id: string) => `Realm ${id} is archived and read-only`],
    ["being deleted", markRealmDeleting, (id: string) => `Realm ${id} is being deleted`],
  ] as const) {
    it(`takes no messages and is not dissolved when its realm is ${state}`, async () => {
      const realmId = await newRealm(server);
      const { swarmId, agentId } = await swarmOf(realmId);
      await make(server, realmId);
      const broadcast = { agentId, type: "observation", message: "still here" };
      expect(await call(server, "POST", `/api/swarm/${swarmId}/broadcast`, broadcast)).toEqual({
        status: 409,
        body: { error: error(realmId) },
      });
      expect(await call(server, "POST", `/api/swarm/${swarmId}/dissolve`)).toEqual({
        status: 409,
        body: { error: error(realmId) },
      });
      const status = await call(server, "GET", `/api/swarm/${swarmId}/status`);
      expect(status.body).toMatchObject({ status: "active", messageCount: 0 });
    });
  }
});

const hold = (functionId: string, matches: (input: Record<string, unknown>) => boolean, after: boolean) =>
  holdCalls(server, functionId, matches, { after });

describe("a broadcast racing its realm's delete", () => {
  it("leaves no message once the swarm is purged", async () => {
    const realmId = await newRealm(server);
    const { swarmId, agentId } = await swarmOf(realmId);
    // The broadcast checked its realm before the delete began, and writes while the purge is at the swarm.
    const realmRead = hold("realm::get", (input) => input.id === realmId, true);
    const recordDelete = hold(
      "state::delete",
      (input) => input.scope === "swarms" && input.key === swarmId,
      false,
    );
    const broadcast = call(server, "POST", `/api/swarm/${swarmId}/broadcast`, {
      agentId,
      type: "observation",
      message: "late",
    });
    await until(() => realmRead.held() > 0);
    const deleted = call(server, "DELETE", `/api/realms/${realmId}`);
    await until(() => recordDelete.held() > 0);
    realmRead.release();
    await broadcast;
    recordDelete.release();
    expect((await deleted).body).toEqual({ deleted: true });
    const { groups } = (await server.service.engine.trigger({
      function_id: "state::list_groups",
      payload: {},
    })) as { groups: string[] };
    expect(groups.filter((scope) => scope.includes(swarmId))).toEqual([]);
  });
});
