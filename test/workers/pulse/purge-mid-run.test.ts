import { describe, expect, it } from "vitest";
import { call } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { registered, setup } from "./helpers.ts";

/**
 * An agent (or realm) deleted while one of its pulse runs is going: the purge deletes the run's
 * Running record, and the run ending afterwards must not write it back.
 */
const ctx = serverWithFakeModel();
const NEVER = "0 0 0 1 1 *";

const runsIn = async (realmId: string) =>
  (
    (await ctx.server.service.engine.trigger({
      function_id: "state::list",
      payload: { scope: `pulse_runs:${realmId}` },
    })) as { items: unknown[] }
  ).items;

async function runDeletedMidway(deletePath: (ids: { realmId: string; agentId: string }) => string) {
  const ids = await setup(ctx.server);
  await registered(ctx.server, { ...ids, cron: NEVER });
  ctx.fake.reply({ content: "late", delayMs: 800 });
  const run = call(ctx.server, "POST", "/api/pulse/invoke", ids);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect((await call(ctx.server, "DELETE", deletePath(ids))).status).toBeLessThan(300);
  expect((await run).status).toBe(200);
  return ids;
}

describe("a pulse run whose agent or realm is deleted before it ends", () => {
  it("is not written back after the agent's purge: no run is left, and status knows no pulse (404)", async () => {
    const { realmId, agentId } = await runDeletedMidway(({ agentId }) => `/api/agents/${agentId}`);
    expect(await runsIn(realmId)).toEqual([]);
    expect((await call(ctx.server, "GET", `/api/pulse/${realmId}/${agentId}`)).status).toBe(404);
  });

  it("is not written back after the realm's purge", async () => {
    const { realmId } = await runDeletedMidway(({ realmId }) => `/api/realms/${realmId}`);
    expect(await runsIn(realmId)).toEqual([]);
  });

  it("is still stored as it ended when nothing was deleted", async () => {
    const ids = await setup(ctx.server);
    const run = await call(ctx.server, "POST", "/api/pulse/invoke", ids);
    expect(run.body.status).toBe("Completed");
    const status = await call(ctx.server, "GET", `/api/pulse/${ids.realmId}/${ids.agentId}`);
    expect(status.body.recentRuns).toEqual([run.body]);
  });
});
