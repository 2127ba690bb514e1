import { afterEach, describe, expect, it } from "vitest";
import { stateClient } from "../../../src/engine/state/client.ts";
import { setClock } from "../../../src/shared/clock.ts";
import { DAY_MS } from "../../../src/shared/retention.ts";
import { isExpiredSwarm, realmSwarmIds } from "../../../src/workers/swarm/store.ts";
import { type JsonBody, startTestServer, type TestServer } from "../../helpers/server.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const at = (days: number) => T0 + days * DAY_MS;
const iso = (days: number) => new Date(at(days)).toISOString();

afterEach(() => setClock(null));

describe("isExpiredSwarm", () => {
  it("takes swarms that ended before the cutoff, never an active one", () => {
    const cutoff = at(10);
    for (const status of ["dissolved", "expired"] as const) {
      expect(isExpiredSwarm({ status, endedAt: iso(9) }, cutoff)).toBe(true);
      expect(isExpiredSwarm({ status, endedAt: iso(10) }, cutoff)).toBe(false);
      expect(isExpiredSwarm({ status }, cutoff)).toBe(false);
    }
    expect(isExpiredSwarm({ status: "active", endedAt: iso(1) }, cutoff)).toBe(false);
    expect(isExpiredSwarm({ status: "active" }, cutoff)).toBe(false);
  });
});

describe("swarm retention in the service", () => {
  let server: TestServer;
  afterEach(async () => {
    setClock(null);
    await server?.close();
  });

  it("deletes swarms ended before AGENTOS_SWARM_RETENTION_DAYS with their messages, in every realm, never an active one", async () => {
    server = await startTestServer({ swarmRetentionDays: 30 });
    const engine = server.service.engine;
    const call = (function_id: string, payload: unknown) =>
      engine.trigger({ function_id, payload }) as Promise<JsonBody>;
    const realmA = (await call("realm::create", { name: "swarm-ret-a", owner: "t" })).id as string;
    const realmB = (await call("realm::create", { name: "swarm-ret-b", owner: "t" })).id as string;
    const create = async (realmId: string, maxDurationMs = 3_600_000) =>
      (await call("swarm::create", { goal: "g", agentIds: ["a"], realmId, maxDurationMs })).swarmId as string;

    setClock({ now: () => at(0) });
    const dissolvedOld = await create(realmA);
    await call("swarm::broadcast", {
      swarmId: dissolvedOld,
      agentId: "a",
      type: "observation",
      message: "m",
    });
    setClock({ now: () => at(1) });
    await call("swarm::dissolve", { swarmId: dissolvedOld });
    setClock({ now: () => at(2) });
    const expiredOld = await create(realmB, 1000);
    setClock({ now: () => at(3) });
    await call("swarm::sweep", {});
    expect((await call("swarm::status", { swarmId: expiredOld })).status).toBe("expired");
    const active = await create(realmA, 30 * DAY_MS);
    setClock({ now: () => at(35) });
    const dissolvedRecent = await create(realmA);
    await call("swarm::dissolve", { swarmId: dissolvedRecent });

    setClock({ now: () => at(40) });
    expect(await call("swarm::sweep_retention", {})).toEqual({ deleted: 2 });

    const state = stateClient((request) => engine.trigger(request));
    expect((await realmSwarmIds(state, realmA)).sort()).toEqual([active, dissolvedRecent].sort());
    expect(await realmSwarmIds(state, realmB)).toEqual([]);
    expect((await state.list(`swarm_messages:${dissolvedOld}`)).items).toEqual([]);
    await expect(call("swarm::status", { swarmId: dissolvedOld })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(call("swarm::status", { swarmId: expiredOld })).rejects.toMatchObject({ code: "not_found" });
    const listed = await call("swarm::list", { realmId: realmA });
    expect(listed.count).toBe(2);
    expect(await call("swarm::sweep_retention", {})).toEqual({ deleted: 0 });
  });
});
