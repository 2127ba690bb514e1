import { afterEach, describe, expect, it } from "vitest";
import { stateClient } from "../../../src/engine/state/client.ts";
import type { TriggerRequest } from "../../../src/engine/types.ts";
import { type ExecutorDeps, executeRun, RunCancelled } from "../../../src/workers/workflow/executor.ts";
import type { Run, Workflow } from "../../../src/workers/workflow/schema.ts";
import {
  ACTIVE_SCOPE,
  listRuns,
  loadRun,
  RUNS_SCOPE,
  type StoredRun,
  saveOwnedRun,
  saveRun,
  startRun,
} from "../../../src/workers/workflow/store.ts";
import { createStateEngine } from "../../helpers/engine.ts";

let setup: ReturnType<typeof createStateEngine> | undefined;
afterEach(async () => {
  await setup?.close();
  setup = undefined;
});

/** The state engine, counting the state::* calls made through it. */
function countedState() {
  setup = createStateEngine();
  const { engine } = setup;
  const calls: string[] = [];
  engine.worker("test").registerFunction({ id: "test::noop" }, async () => "ok");
  const trigger = (request: TriggerRequest) => {
    if (request.function_id.startsWith("state::")) calls.push(request.function_id);
    return engine.trigger(request);
  };
  return { engine, state: stateClient(trigger), calls, trigger };
}

function newRun(steps: number, owner?: string): { run: Run; workflow: Workflow } {
  const now = new Date().toISOString();
  const workflow: Workflow = {
    id: "wf",
    name: "wf",
    realmId: "realm-default",
    version: 1,
    author: { kind: "admin", keyId: "k" },
    createdAt: now,
    updatedAt: now,
    steps: Array.from({ length: steps }, (_, i) => ({
      name: `s${i}`,
      functionId: "test::noop",
      mode: "sequential",
      errorMode: "fail",
      maxRetries: 0,
    })),
  } as Workflow;
  const run: Run = {
    runId: `run-${Math.random().toString(36).slice(2)}`,
    workflowId: "wf",
    workflowVersion: 1,
    realmId: "realm-default",
    status: "running",
    input: null,
    results: [],
    vars: { input: null },
    position: 0,
    startedAt: now,
    ...(owner ? { owner, leaseUntil: new Date(Date.now() + 60_000).toISOString() } : {}),
  };
  return { run, workflow };
}

describe("workflow checkpoints", () => {
  it("starts a run in one write and completes a one-step run in one more, durably", async () => {
    const { state, calls, trigger } = countedState();
    const { run, workflow } = newRun(1);
    const events: string[] = [];
    const deps: ExecutorDeps = {
      trigger,
      checkpoint: (current) => saveRun(state, current),
      publish: (event, current) => events.push(`${event}:${current.status}`),
      retryDelayMs: () => 0,
      inputFields: async () => undefined,
    };
    await startRun(state, run);
    expect(calls).toEqual(["state::batch"]);
    expect(await state.get(ACTIVE_SCOPE, run.runId)).not.toBeNull();
    calls.length = 0;
    await executeRun(deps, workflow, run);
    expect(calls).toEqual(["state::batch"]);
    // Step events still tell of a running run; the completion comes last.
    expect(events).toEqual(["step_completed:running", "completed:completed"]);
    const stored = await loadRun(state, run.runId);
    expect(stored).toMatchObject({
      status: "completed",
      position: 1,
      results: [{ stepName: "s0", output: "ok" }],
    });
    expect(await state.get(ACTIVE_SCOPE, run.runId)).toBeNull();
    expect((await listRuns(state, "realm-default", "wf", 10, 0)).total).toBe(1);
  });

  it("checkpoints each step of a longer run in one write, and the last with the completion", async () => {
    const { state, calls, trigger } = countedState();
    const { run, workflow } = newRun(3);
    const deps: ExecutorDeps = {
      trigger,
      checkpoint: (current) => saveRun(state, current),
      publish: () => undefined,
      retryDelayMs: () => 0,
      inputFields: async () => undefined,
    };
    await startRun(state, run);
    await executeRun(deps, workflow, run);
    expect(calls).toEqual(Array(4).fill("state::batch"));
    const stored = await loadRun(state, run.runId);
    expect(stored?.results.map((result) => result.stepName)).toEqual(["s0", "s1", "s2"]);
    expect(stored?.status).toBe("completed");
  });

  it("writes a leased run on the version it last wrote, and reads again when someone wrote in between", async () => {
    const { state, calls } = countedState();
    const { run } = newRun(2, "node-a");
    await startRun(state, run);
    calls.length = 0;
    run.results.push({ stepName: "s0", output: 1, durationMs: 0 });
    run.position = 1;
    await saveOwnedRun(state, run, 60_000);
    // No read before the write: the version written at the start still holds.
    expect(calls).toEqual(["state::batch"]);
    // A lease renewal in between: the write conflicts, the record is read again, and the write goes through.
    const current = (await state.getVersioned<StoredRun>(RUNS_SCOPE, run.runId)) as {
      value: StoredRun;
      version: number;
    };
    await state.set(
      RUNS_SCOPE,
      run.runId,
      { ...current.value, leaseUntil: new Date().toISOString() },
      current.version,
    );
    calls.length = 0;
    run.results.push({ stepName: "s1", output: 2, durationMs: 0 });
    run.position = 2;
    await saveOwnedRun(state, run, 60_000);
    expect(calls).toEqual(["state::batch", "state::get", "state::batch"]);
    expect((await loadRun(state, run.runId))?.results).toHaveLength(2);
  });

  it("stops a leased run flagged cancelled elsewhere, also at its completing checkpoint", async () => {
    const { state } = countedState();
    const { run } = newRun(1, "node-a");
    await startRun(state, run);
    const current = (await state.getVersioned<StoredRun>(RUNS_SCOPE, run.runId)) as {
      value: StoredRun;
      version: number;
    };
    await state.set(RUNS_SCOPE, run.runId, { ...current.value, cancelRequested: true }, current.version);
    run.results.push({ stepName: "s0", output: 1, durationMs: 0 });
    run.position = 1;
    run.status = "completed";
    await expect(saveOwnedRun(state, run, 60_000)).rejects.toBeInstanceOf(RunCancelled);
    // Recording the cancel itself goes through.
    run.status = "cancelled";
    await saveOwnedRun(state, run, 60_000);
    expect((await loadRun(state, run.runId))?.status).toBe("cancelled");
    expect(await state.get(ACTIVE_SCOPE, run.runId)).toBeNull();
  });

  it("refuses to checkpoint a leased run another node took over", async () => {
    const { state } = countedState();
    const { run } = newRun(1, "node-a");
    await startRun(state, run);
    const current = (await state.getVersioned<StoredRun>(RUNS_SCOPE, run.runId)) as {
      value: StoredRun;
      version: number;
    };
    await state.set(RUNS_SCOPE, run.runId, { ...current.value, owner: "node-b" }, current.version);
    run.position = 1;
    await expect(saveOwnedRun(state, run, 60_000)).rejects.toMatchObject({ reason: "lease_lost" });
    expect((await loadRun(state, run.runId))?.owner).toBe("node-b");
  });
});
