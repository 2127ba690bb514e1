import { describe, expect, it } from "vitest";
import { stateClient } from "../../../src/engine/state/client.ts";
import { notFound } from "../../../src/shared/errors.ts";
import { AGENTS_SCOPE } from "../../../src/workers/agents/store.ts";
import { CONFIGS_SCOPE } from "../../../src/workers/pulse/store.ts";
import { REALMS_SCOPE } from "../../../src/workers/realm/schema.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { json } from "../../helpers/server.ts";
import { pulseTriggers, registered, setup } from "./helpers.ts";

/**
 * A pulse whose realm or agent disappeared without the delete cascade reaching the pulse (records
 * removed underneath it): the tick retires it instead of failing a run on every tick forever.
 */
const ctx = serverWithFakeModel();
const NEVER = "0 0 0 1 1 *";

const state = () => stateClient((request) => ctx.server.service.engine.trigger(request));
const tick = (realmId: string, agentId: string) =>
  ctx.server.service.engine.trigger({
    function_id: "pulse::tick",
    payload: { realmId, agentId, trigger: "cron", scheduled_time: "2030-01-01T00:00:00.000Z" },
  }) as Promise<Record<string, unknown>>;
const runsOf = async (realmId: string, agentId: string) => {
  const page = (await ctx.server.service.engine.trigger({
    function_id: "state::list",
    payload: { scope: `pulse_runs:${realmId}`, prefix: `${agentId}/` },
  })) as { items: Array<{ value: { status: string; error?: string } }> };
  return page.items.map((item) => item.value);
};

/** Retired: config gone, trigger stopped; the last tick says why; the next tick finds no pulse. */
async function expectRetired(realmId: string, agentId: string, reason: string) {
  expect(await state().get(CONFIGS_SCOPE, `${realmId}/${agentId}`)).toBeNull();
  expect(pulseTriggers(ctx.server, agentId)).toHaveLength(0);
  expect(await state().get("pulse_last_ticks", `${realmId}/${agentId}`)).toMatchObject({
    outcome: "skipped",
    reason,
  });
  expect(await tick(realmId, agentId)).toEqual({ skipped: true, reason: "not_registered" });
}

describe("a pulse whose agent or realm no longer exists", () => {
  it("is retired with agent_deleted when the agent is gone, without a Failed run", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER });
    await state().delete(AGENTS_SCOPE, agentId);
    const changed: unknown[] = [];
    ctx.server.service.engine.worker("probe").registerFunction({ id: "probe::changed" }, (data) => {
      changed.push(data);
    });
    ctx.server.service.engine.registerTrigger("probe", {
      type: "subscribe",
      function_id: "probe::changed",
      config: { topic: "pulse.changed" },
    });
    expect(await tick(realmId, agentId)).toEqual({ skipped: true, reason: "agent_deleted" });
    expect(await runsOf(realmId, agentId)).toEqual([]);
    expect(ctx.fake.requests).toHaveLength(0);
    // Every node is told, so their triggers stop too.
    await expect.poll(() => changed).toContainEqual({ realmId, agentId });
    await expectRetired(realmId, agentId, "agent_deleted");
  });

  it("is retired with realm_deleted when the realm answers 404", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER });
    await state().delete(REALMS_SCOPE, realmId);
    expect((await ctx.server.request(`/api/realms/${realmId}`)).status).toBe(404);
    expect(await tick(realmId, agentId)).toEqual({ skipped: true, reason: "realm_deleted" });
    expect(await runsOf(realmId, agentId)).toEqual([]);
    await expectRetired(realmId, agentId, "realm_deleted");
  });

  it("is retired after a run in which agent::chat answered 404 for the agent", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER });
    // The agent goes between the tick's check and the call: agent::get still sees it once.
    let reads = 0;
    ctx.server.service.engine.worker("probe").registerFunction({ id: "agent::get" }, () => {
      reads++;
      if (reads === 1) return { id: agentId, realmId };
      throw notFound(`Agent ${agentId} not found`);
    });
    await state().delete(AGENTS_SCOPE, agentId);
    const run = await tick(realmId, agentId);
    expect(run).toMatchObject({ status: "Failed", attempts: 1 });
    expect(run.error).toContain("not found");
    expect(await state().get(CONFIGS_SCOPE, `${realmId}/${agentId}`)).toBeNull();
    expect(pulseTriggers(ctx.server, agentId)).toHaveLength(0);
    expect(await tick(realmId, agentId)).toEqual({ skipped: true, reason: "not_registered" });
    expect(await runsOf(realmId, agentId)).toHaveLength(1);
  });

  it("still goes ahead (fail-open) when the realm or the agent cannot be read for another reason", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER });
    const probe = ctx.server.service.engine.worker("probe");
    // The tick's realm read fails; the agent's own check during its turn then finds the realm active.
    let realmReads = 0;
    probe.registerFunction({ id: "realm::get" }, () => {
      if (++realmReads === 1) throw new Error("realm store unavailable");
      return { id: realmId, name: "r", owner: "o", status: "Active" };
    });
    probe.registerFunction({ id: "agent::get" }, () => {
      throw new Error("agent store unavailable");
    });
    expect(await tick(realmId, agentId)).toMatchObject({ status: "Completed", source: "cron" });
    expect(await state().get(CONFIGS_SCOPE, `${realmId}/${agentId}`)).not.toBeNull();
    expect(pulseTriggers(ctx.server, agentId)).toHaveLength(1);
    const status = await json(await ctx.server.request(`/api/pulse/${realmId}/${agentId}`));
    expect(status.lastTick).toMatchObject({ outcome: "ran" });
  });
});
