import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StateClient } from "../../../src/engine/state/client.ts";
import { registerPulse } from "../../../src/workers/pulse/index.ts";
import type { PulseRun } from "../../../src/workers/pulse/schema.ts";
import {
  CONFIGS_SCOPE,
  LEASES_SCOPE,
  runKey,
  runsScope,
  SEQUENCES_SCOPE,
} from "../../../src/workers/pulse/store.ts";
import { createStateEngine } from "../../helpers/engine.ts";

type Harness = ReturnType<typeof createStateEngine>;
let harness: Harness;

beforeEach(() => {
  harness = createStateEngine();
  // A stand-in agent that always answers: these tests are about what happens around the call.
  harness.engine.worker("agents").registerFunction({ id: "agent::chat" }, () => ({ content: "awake" }));
});
afterEach(() => harness.close());

const realmId = "realm-r";
const agentId = "agent-a";
const key = `${realmId}/${agentId}`;
const runningRun = (id: string): PulseRun => ({
  id,
  agentId,
  realmId,
  status: "Running",
  source: "cron",
  contextSnapshot: { agentId, realmId, mode: "thin" },
  startedAt: "2020-01-01T00:00:00.000Z",
  attempts: 0,
});

/** What a process that died mid-run leaves behind: a Running run and the lease naming it. */
async function leftBehind(state: StateClient, expiresAt: string): Promise<string> {
  const stored = runKey(agentId, 1);
  await state.set(runsScope(realmId), stored, runningRun("run-dead"));
  await state.set(LEASES_SCOPE, key, {
    holder: "lease-dead",
    acquiredAt: "2020-01-01T00:00:00.000Z",
    expiresAt,
    runKey: stored,
  });
  await state.update(SEQUENCES_SCOPE, key, [{ type: "increment", path: "seq", by: 1 }]);
  return stored;
}

describe("runs left behind by a stopped process", () => {
  it("single node: at start the leases are cleared and their runs marked interrupted", async () => {
    const stored = await leftBehind(harness.state, "2999-01-01T00:00:00.000Z");
    await registerPulse(harness.engine.worker("pulse"), { embedded: true }).ready;
    expect(await harness.state.get(LEASES_SCOPE, key)).toBeNull();
    const run = await harness.state.get<PulseRun>(runsScope(realmId), stored);
    expect(run).toMatchObject({ status: "Failed" });
    expect(run?.error).toContain("interrupted");
  });

  it("cluster: a lease that has not expired is left to its holder, and blocks a second run", async () => {
    await leftBehind(harness.state, "2999-01-01T00:00:00.000Z");
    await registerPulse(harness.engine.worker("pulse")).ready;
    expect(await harness.state.get(LEASES_SCOPE, key)).not.toBeNull();
    await expect(
      harness.engine.trigger({ function_id: "pulse::invoke", payload: { realmId, agentId } }),
    ).rejects.toThrow("already running");
  });

  it("cluster: an expired lease is taken over and the run it held is marked interrupted", async () => {
    const stored = await leftBehind(harness.state, "2020-01-01T01:00:00.000Z");
    await registerPulse(harness.engine.worker("pulse")).ready;
    const run = (await harness.engine.trigger({
      function_id: "pulse::invoke",
      payload: { realmId, agentId },
    })) as PulseRun;
    expect(run).toMatchObject({ status: "Completed", output: "awake", source: "manual" });
    expect(await harness.state.get<PulseRun>(runsScope(realmId), stored)).toMatchObject({ status: "Failed" });
    expect(await harness.state.get(LEASES_SCOPE, key)).toBeNull();
  });
});

describe("start-up", () => {
  it("schedules every stored pulse, and a change published by another node re-syncs this one", async () => {
    const config = { agentId, realmId, cron: "0 0 0 1 1 *", enabled: true, contextMode: "Thin" };
    await harness.state.set(CONFIGS_SCOPE, key, config);
    await registerPulse(harness.engine.worker("pulse")).ready;
    const ticks = () => harness.engine.triggers.list().filter((t) => t.function_id === "pulse::tick");
    expect(ticks().map((t) => t.config)).toEqual([{ expression: config.cron, data: { agentId, realmId } }]);
    // Another node changed the cron, then deleted the pulse: each change is announced on pulse.changed.
    const announce = () =>
      harness.engine.trigger({
        function_id: "publish",
        payload: { topic: "pulse.changed", data: { realmId, agentId } },
      });
    await harness.state.set(CONFIGS_SCOPE, key, { ...config, cron: "0 0 12 * * *" });
    await announce();
    await expect
      .poll(() => ticks().map((t) => (t.config as { expression: string }).expression))
      .toEqual(["0 0 12 * * *"]);
    await harness.state.delete(CONFIGS_SCOPE, key);
    await announce();
    await expect.poll(() => ticks()).toEqual([]);
  });
});
