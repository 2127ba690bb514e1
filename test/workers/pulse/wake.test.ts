import { describe, expect, it } from "vitest";
import { call } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { eventually } from "../../helpers/iii.ts";
import type { JsonBody } from "../../helpers/server.ts";
import { registered, setup, statusOf } from "./helpers.ts";

const ctx = serverWithFakeModel();
const EVERY_SECOND = "* * * * * *";

function statusWhen(realmId: string, agentId: string, check: (status: JsonBody) => boolean) {
  return eventually(async () => {
    const status = await statusOf(ctx.server, realmId, agentId, "?limit=100");
    return check(status) ? status : undefined;
  }, 15_000);
}

describe('wakeOn: "changes"', () => {
  it("skips the model while nothing the agent can see changes, and wakes once a mission is assigned", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const config = await registered(ctx.server, { realmId, agentId, cron: EVERY_SECOND, wakeOn: "changes" });
    expect(config.wakeOn).toBe("changes");
    // The first tick has nothing to compare with: it runs, then nothing changes.
    const first = await statusWhen(realmId, agentId, (s) => s.recentRuns.length >= 1);
    const quiet = await statusWhen(realmId, agentId, (s) => s.lastTick?.reason === "no_changes");
    const calls = ctx.fake.requests.length;
    await statusWhen(
      realmId,
      agentId,
      (s) => s.lastTick?.reason === "no_changes" && s.lastTick.scheduledTime !== quiet.lastTick.scheduledTime,
    );
    expect(ctx.fake.requests.length).toBe(calls);
    const mission = await call(ctx.server, "POST", "/api/missions", {
      realmId,
      title: "new work",
      createdBy: "boss",
    });
    await call(ctx.server, "POST", `/api/missions/${realmId}/${mission.body.id}/checkout`, { agentId });
    // A run is listed from its start (Running): wait for it to end.
    const woken = await statusWhen(
      realmId,
      agentId,
      (s) => s.recentRuns.length > first.recentRuns.length && s.recentRuns[0].status !== "Running",
    );
    expect(woken.recentRuns[0].status).toBe("Completed");
    expect(ctx.fake.requests.length).toBeGreaterThan(calls);
  }, 45_000);

  it("wakes on every tick by default", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const config = await registered(ctx.server, { realmId, agentId, cron: EVERY_SECOND });
    expect(config.wakeOn).toBe("always");
    await statusWhen(realmId, agentId, (s) => s.recentRuns.length >= 2);
  }, 30_000);

  it("adds the agent's graph around its active missions to a Full context when asked", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, {
      realmId,
      agentId,
      cron: "0 0 0 1 1 *",
      contextMode: "Full",
      contextGraph: true,
    });
    const mission = await call(ctx.server, "POST", "/api/missions", {
      realmId,
      title: "launch",
      createdBy: "boss",
    });
    await call(ctx.server, "POST", `/api/missions/${realmId}/${mission.body.id}/checkout`, { agentId });
    await call(ctx.server, "POST", "/api/kg/add", {
      agentId,
      entity: "launch",
      type: "project",
      relations: [{ target: "press", type: "needs" }],
    });
    const run = await call(ctx.server, "POST", "/api/pulse/invoke", { realmId, agentId });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.contextSnapshot.graph.map((v: { entity: string }) => v.entity)).toEqual(["launch"]);
    expect(run.body.contextSnapshot.missions.map((m: { title: string }) => m.title)).toEqual(["launch"]);
  });
});
