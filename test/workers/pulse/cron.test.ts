import { describe, expect, it } from "vitest";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { eventually } from "../../helpers/iii.ts";
import type { JsonBody } from "../../helpers/server.ts";
import { exhaustBudget, invoke, registered, setup, statusOf, toggle } from "./helpers.ts";

const ctx = serverWithFakeModel();
const EVERY_SECOND = "* * * * * *";
const WAIT = 15_000;

type Run = { id: string; source: string; status: string; startedAt: string };

/** Polls the agent's status until `check` accepts it. */
function statusWhen(realmId: string, agentId: string, check: (status: JsonBody) => boolean) {
  return eventually(async () => {
    const status = await statusOf(ctx.server, realmId, agentId, "?limit=100");
    return check(status) ? status : undefined;
  }, WAIT);
}

describe("cron ticks", () => {
  it("wake the agent every second: cron runs, newest first, and the last tick names its run", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: EVERY_SECOND });
    const status = await statusWhen(
      realmId,
      agentId,
      (s) => s.recentRuns.filter((r: Run) => r.status === "Completed").length >= 2,
    );
    const runs = status.recentRuns as Run[];
    expect(runs.every((run) => run.source === "cron")).toBe(true);
    const started = runs.map((run) => run.startedAt);
    expect(started).toEqual([...started].sort().reverse());
    expect(status.lastTick.outcome).toBe("ran");
    expect(status.lastTick.scheduledTime).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(ctx.fake.requests.length).toBeGreaterThanOrEqual(2);
  }, 30_000);

  it("are skipped while the pulse is disabled, and wake the agent again once enabled", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: EVERY_SECOND });
    await statusWhen(realmId, agentId, (s) => s.recentRuns.length >= 1);
    expect((await toggle(ctx.server, realmId, agentId, { enabled: false })).status).toBe(200);
    const firstSkip = await statusWhen(realmId, agentId, (s) => s.lastTick?.reason === "disabled");
    expect(firstSkip.lastTick).toMatchObject({ outcome: "skipped", reason: "disabled" });
    // A later skipped tick: no run was added in between.
    const laterSkip = await statusWhen(
      realmId,
      agentId,
      (s) =>
        s.lastTick?.reason === "disabled" && s.lastTick.scheduledTime !== firstSkip.lastTick.scheduledTime,
    );
    expect(laterSkip.recentRuns).toHaveLength(firstSkip.recentRuns.length);
    expect((await toggle(ctx.server, realmId, agentId, { enabled: true })).status).toBe(200);
    await statusWhen(
      realmId,
      agentId,
      (s) => s.lastTick?.outcome === "ran" && s.recentRuns.length > laterSkip.recentRuns.length,
    );
  }, 45_000);

  it("are skipped with budget_exceeded when the ledger refuses the agent", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await exhaustBudget(ctx.server, realmId, agentId);
    await registered(ctx.server, { realmId, agentId, cron: EVERY_SECOND });
    const status = await statusWhen(realmId, agentId, (s) => s.lastTick !== null);
    expect(status.lastTick).toMatchObject({ outcome: "skipped", reason: "budget_exceeded" });
    expect(status.recentRuns).toEqual([]);
  }, 30_000);

  it("are skipped while the realm is paused or archived, and go ahead when the realm cannot be read", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: EVERY_SECOND });
    let realmStatus: string | null = "Paused";
    // A stand-in realm worker whose answer the test controls (null: the realm read fails).
    ctx.server.service.engine.worker("probe").registerFunction({ id: "realm::get" }, () => {
      if (realmStatus === null) throw new Error("realm store unavailable");
      return { id: realmId, name: "r", owner: "o", status: realmStatus };
    });
    await statusWhen(realmId, agentId, (s) => s.lastTick?.reason === "realm_paused");
    const paused = await invoke(ctx.server, { realmId, agentId });
    expect(paused.status).toBe(409);
    realmStatus = "Archived";
    await statusWhen(realmId, agentId, (s) => s.lastTick?.reason === "realm_archived");
    realmStatus = null;
    await statusWhen(realmId, agentId, (s) => s.lastTick?.outcome === "ran");
  }, 45_000);

  it("are skipped with already_running while the agent's previous run is still going", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    ctx.fake.reply({ content: "slow", delayMs: 3000 });
    await registered(ctx.server, { realmId, agentId, cron: EVERY_SECOND });
    const status = await statusWhen(realmId, agentId, (s) => s.lastTick?.reason === "already_running");
    expect(status.recentRuns[0]).toMatchObject({ status: "Running", source: "cron" });
  }, 30_000);
});
