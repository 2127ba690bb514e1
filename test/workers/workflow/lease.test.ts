import { afterEach, describe, expect, it } from "vitest";
import { stateClient } from "../../../src/engine/state/client.ts";
import type { TriggerRequest } from "../../../src/engine/types.ts";
import { setClock } from "../../../src/shared/clock.ts";
import { createLeases, hold, renewLeases, takeOverLapsed } from "../../../src/workers/workflow/lease.ts";
import type { Run } from "../../../src/workers/workflow/schema.ts";
import { RUNS_SCOPE, type StoredRun, startRun } from "../../../src/workers/workflow/store.ts";
import { createStateEngine } from "../../helpers/engine.ts";

const LEASE_MS = 1_000;
let setup: ReturnType<typeof createStateEngine> | undefined;
afterEach(async () => {
  setClock(null);
  await setup?.close();
  setup = undefined;
});

/** The state engine, counting the state::* calls made through it. */
function countedState() {
  setup = createStateEngine();
  const { engine } = setup;
  const calls: string[] = [];
  const trigger = (request: TriggerRequest) => {
    if (request.function_id.startsWith("state::")) calls.push(request.function_id);
    return engine.trigger(request);
  };
  return { state: stateClient(trigger), calls };
}

function newRun(): Run {
  return {
    runId: `run-${Math.random().toString(36).slice(2)}`,
    workflowId: "wf",
    workflowVersion: 1,
    realmId: "realm-default",
    status: "running",
    input: null,
    results: [],
    vars: { input: null },
    position: 0,
    startedAt: new Date().toISOString(),
  };
}

/** A node's monotonic clock, moved by the test. */
function manualClock() {
  let now = 0;
  return { read: () => now, advance: (ms: number) => (now += ms) };
}

describe("workflow run leases", () => {
  it("a node whose wall clock runs far ahead does not take over a run whose holder still renews", async () => {
    const { state } = countedState();
    const holder = createLeases(LEASE_MS, manualClock().read);
    const run = newRun();
    hold(holder, run);
    await startRun(state, run);

    // The other node's wall clock is a minute ahead: the holder's leaseUntil is long past for it.
    setClock({ now: () => Date.now() + 60_000 });
    const observerClock = manualClock();
    const observer = createLeases(LEASE_MS, observerClock.read);
    const taken: string[] = [];
    for (let round = 0; round < 5; round++) {
      expect(await takeOverLapsed(state, observer, (resumed) => taken.push(resumed.runId))).toBe(0);
      await renewLeases(state, holder);
      observerClock.advance(2 * LEASE_MS);
    }
    expect(taken).toEqual([]);
    expect((await state.get<StoredRun>(RUNS_SCOPE, run.runId))?.owner).toBe(holder.nodeId);

    // The holder dies: once its record stayed unchanged for a full lease, the observer takes the run.
    expect(await takeOverLapsed(state, observer, (resumed) => taken.push(resumed.runId))).toBe(0);
    observerClock.advance(LEASE_MS);
    expect(await takeOverLapsed(state, observer, (resumed) => taken.push(resumed.runId))).toBe(1);
    expect(taken).toEqual([run.runId]);
    expect((await state.get<StoredRun>(RUNS_SCOPE, run.runId))?.owner).toBe(observer.nodeId);
  });

  it("waits for the holder's own lease when it is longer than the observer's", async () => {
    const { state } = countedState();
    const holder = createLeases(10 * LEASE_MS, manualClock().read);
    const run = newRun();
    hold(holder, run);
    await startRun(state, run);
    const observerClock = manualClock();
    const observer = createLeases(LEASE_MS, observerClock.read);
    expect(await takeOverLapsed(state, observer, () => undefined)).toBe(0);
    observerClock.advance(5 * LEASE_MS);
    expect(await takeOverLapsed(state, observer, () => undefined)).toBe(0);
    observerClock.advance(5 * LEASE_MS);
    expect(await takeOverLapsed(state, observer, () => undefined)).toBe(1);
  });

  it("renews all of a node's runs in one state call", async () => {
    const { state, calls } = countedState();
    const leases = createLeases(LEASE_MS);
    const runs = Array.from({ length: 50 }, newRun);
    for (const run of runs) {
      hold(leases, run);
      await startRun(state, run);
    }
    const before = await Promise.all(runs.map((run) => state.getVersioned<StoredRun>(RUNS_SCOPE, run.runId)));
    setClock({ now: () => Date.now() + 5_000 });
    calls.length = 0;
    await renewLeases(state, leases);
    expect(calls).toEqual(["state::batch"]);
    for (const [index, run] of runs.entries()) {
      const after = await state.getVersioned<StoredRun>(RUNS_SCOPE, run.runId);
      expect(after?.version).toBe((before[index]?.version ?? 0) + 1);
      expect(Date.parse(after?.value.leaseUntil ?? "")).toBeGreaterThan(Date.parse(run.leaseUntil ?? ""));
    }
    // The next round again on the versions the first one wrote.
    calls.length = 0;
    await renewLeases(state, leases);
    expect(calls).toEqual(["state::batch"]);
  });

  it("renews a run that changed meanwhile on its own, hearing of a cancel there, and the others together", async () => {
    const { state, calls } = countedState();
    const leases = createLeases(LEASE_MS);
    const runs = Array.from({ length: 16 }, newRun);
    for (const run of runs) {
      hold(leases, run);
      await startRun(state, run);
    }
    const flagged = runs[1] as Run;
    const current = await state.get<StoredRun>(RUNS_SCOPE, flagged.runId);
    await state.set(RUNS_SCOPE, flagged.runId, { ...current, cancelRequested: true });
    const cancelled: string[] = [];
    setClock({ now: () => Date.now() + 5_000 });
    calls.length = 0;
    await renewLeases(state, leases, (runId) => cancelled.push(runId));
    expect(cancelled).toEqual([flagged.runId]);
    // Only the changed run is read (and written on its own); halving found it in a few batches.
    expect(calls.filter((call) => call === "state::get")).toHaveLength(1);
    expect(calls.filter((call) => call === "state::batch").length).toBeLessThanOrEqual(1 + 2 * Math.log2(16));
    for (const run of runs) {
      const after = await state.get<StoredRun>(RUNS_SCOPE, run.runId);
      expect(Date.parse(after?.leaseUntil ?? "")).toBeGreaterThan(Date.parse(run.leaseUntil ?? ""));
    }
  });
});
