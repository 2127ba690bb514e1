import { afterEach, describe, expect, it } from "vitest";
import type { InvocationContext } from "../../../src/engine/types.ts";
import { setClock } from "../../../src/shared/clock.ts";
import { hold, renewLeases } from "../../../src/workers/workflow/lease.ts";
import { resumeRuns } from "../../../src/workers/workflow/resume.ts";
import { cancelRun, execute } from "../../../src/workers/workflow/runs.ts";
import type { Run, Workflow } from "../../../src/workers/workflow/schema.ts";
import {
  ACTIVE_SCOPE,
  RUNS_SCOPE,
  type StoredRun,
  startRun,
  workflowsScope,
} from "../../../src/workers/workflow/store.ts";
import { createStateEngine } from "../../helpers/engine.ts";
import { eventually } from "../../helpers/iii.ts";
import { clusterNode } from "./cluster-node.ts";

const LEASE_MS = 1_000;
const ADMIN: InvocationContext = {
  functionId: "workflow::cancel",
  auth: { kind: "admin", keyId: "k" },
  signal: new AbortController().signal,
};

let setup: ReturnType<typeof createStateEngine> | undefined;
afterEach(async () => {
  setClock(null);
  await setup?.close();
  setup = undefined;
});

/** The state engine with `test::wait`: a step that runs until its invocation is aborted. */
function engineWithWaitingStep() {
  setup = createStateEngine();
  const { engine, state } = setup;
  const calls: string[] = [];
  let entered: () => void = () => undefined;
  const stepEntered = new Promise<void>((resolve) => {
    entered = resolve;
  });
  engine.worker("test").registerFunction({ id: "test::wait" }, (_payload, ctx) => {
    calls.push("test::wait");
    entered();
    return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve("aborted")));
  });
  return { engine, state, calls, stepEntered };
}

function waitingWorkflowAndRun(): { workflow: Workflow; run: Run } {
  const now = new Date().toISOString();
  const workflow = {
    id: "wf",
    name: "wf",
    realmId: "realm-default",
    version: 1,
    author: { kind: "admin", keyId: "k" },
    createdAt: now,
    updatedAt: now,
    steps: [{ name: "wait", functionId: "test::wait", mode: "sequential", errorMode: "fail", maxRetries: 0 }],
  } as Workflow;
  const run: Run = {
    runId: `run-${Math.random().toString(36).slice(2)}`,
    workflowId: "wf",
    workflowVersion: 1,
    realmId: "realm-default",
    principal: { kind: "realm", keyId: "k", realmId: "realm-default" },
    status: "running",
    input: null,
    results: [],
    vars: { input: null },
    position: 0,
    startedAt: now,
  };
  return { workflow, run };
}

describe("cancelling a run another node owns, whatever the clocks say", () => {
  it("a node whose wall clock runs a minute ahead only flags a live node's run: its owner stops it", async () => {
    const { state, stepEntered } = engineWithWaitingStep();
    const owner = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    const { workflow, run } = waitingWorkflowAndRun();
    hold(owner.leases, run);
    await startRun(state, run);
    const finished = execute(owner.control, workflow, run).catch((error: unknown) => error);
    await stepEntered;

    // The cancelling node's wall clock is a minute ahead: the owner's leaseUntil is long past for it.
    setClock({ now: () => Date.now() + 60_000 });
    const observer = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    const answer = await cancelRun(observer.control, run.runId, ADMIN);
    expect(answer).toMatchObject({ runId: run.runId, status: "running", cancelRequested: true });
    expect(observer.events).toEqual([]);
    expect((await state.get<StoredRun>(RUNS_SCOPE, run.runId))?.status).toBe("running");
    expect(await state.get(ACTIVE_SCOPE, run.runId)).not.toBeNull();

    // The owner hears of it at its next lease tick and stops the run itself, at the step it was in.
    await renewLeases(state, owner.leases, (runId) => owner.control.local.get(runId)?.controller.abort());
    await finished;
    const stored = await state.get<StoredRun>(RUNS_SCOPE, run.runId);
    expect(stored).toMatchObject({ status: "cancelled", stoppedAt: "wait", owner: owner.leases.nodeId });
    expect(owner.events).toContain("cancelled");
    expect(await state.get(ACTIVE_SCOPE, run.runId)).toBeNull();
  });

  it("a dead owner's flagged run is cancelled by the node that takes it over, its step never run again", async () => {
    const { state, calls } = engineWithWaitingStep();
    const dead = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    const { workflow, run } = waitingWorkflowAndRun();
    await state.set(workflowsScope(workflow.realmId ?? "realm-default"), workflow.id, workflow);
    hold(dead.leases, run);
    await startRun(state, run);

    let monotonic = 0;
    const taker = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS, () => monotonic);
    const answer = await cancelRun(taker.control, run.runId, ADMIN);
    expect(answer).toMatchObject({ status: "running", cancelRequested: true });

    const resume = { state, control: taker.control, graceMs: 0, warn: () => undefined };
    expect(await resumeRuns(resume)).toBe(0);
    monotonic += LEASE_MS;
    expect(await resumeRuns(resume)).toBe(1);
    // Published once the cancel is recorded.
    await eventually(() => taker.events.length > 0);
    expect(taker.events).toEqual(["cancelled"]);
    expect(await state.get<StoredRun>(RUNS_SCOPE, run.runId)).toMatchObject({
      status: "cancelled",
      owner: taker.leases.nodeId,
      stoppedAt: "wait",
    });
    expect(calls).toEqual([]);
    expect(await state.get(ACTIVE_SCOPE, run.runId)).toBeNull();
  });

  it("a run flagged while its taker waits for the run's functions ends cancelled there, never left running", async () => {
    const { engine, state } = engineWithWaitingStep();
    const dead = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    const { workflow, run } = waitingWorkflowAndRun();
    workflow.steps[0] = { ...(workflow.steps[0] as Workflow["steps"][number]), functionId: "test::later" };
    await state.set(workflowsScope("realm-default"), workflow.id, workflow);
    hold(dead.leases, run);
    await startRun(state, run);

    let monotonic = 0;
    const taker = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS, () => monotonic);
    const resume = { state, control: taker.control, graceMs: 60_000, warn: () => undefined };
    expect(await resumeRuns(resume)).toBe(0);
    monotonic += LEASE_MS;
    expect(await resumeRuns(resume)).toBe(1);

    // Cancelled from a third node while the taker waits for test::later; the taker's lease tick hears it.
    const third = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    expect(await cancelRun(third.control, run.runId, ADMIN)).toMatchObject({ cancelRequested: true });
    await renewLeases(state, taker.leases, (runId) => taker.control.local.get(runId)?.controller.abort());
    const calls: string[] = [];
    engine.worker("test").registerFunction({ id: "test::later" }, () => {
      calls.push("test::later");
      return "ran";
    });

    await eventually(() => taker.events.length > 0);
    expect(taker.events).toEqual(["cancelled"]);
    expect(await state.get<StoredRun>(RUNS_SCOPE, run.runId)).toMatchObject({ status: "cancelled" });
    expect(calls).toEqual([]);
  });

  it("a run flagged while its taker waits for functions that never come ends cancelled, not interrupted", async () => {
    const { state } = engineWithWaitingStep();
    const dead = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    const { workflow, run } = waitingWorkflowAndRun();
    workflow.steps[0] = { ...(workflow.steps[0] as Workflow["steps"][number]), functionId: "test::never" };
    await state.set(workflowsScope("realm-default"), workflow.id, workflow);
    hold(dead.leases, run);
    await startRun(state, run);

    let monotonic = 0;
    const taker = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS, () => monotonic);
    const resume = { state, control: taker.control, graceMs: 60_000, warn: () => undefined };
    expect(await resumeRuns(resume)).toBe(0);
    monotonic += LEASE_MS;
    expect(await resumeRuns(resume)).toBe(1);

    // Flagged from a third node; the taker's lease tick hears it. test::never is never registered.
    const third = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    expect(await cancelRun(third.control, run.runId, ADMIN)).toMatchObject({ cancelRequested: true });
    await renewLeases(state, taker.leases, (runId) => taker.control.local.get(runId)?.controller.abort());

    await eventually(() => taker.events.length > 0);
    expect(taker.events).toEqual(["cancelled"]);
    expect(await state.get<StoredRun>(RUNS_SCOPE, run.runId)).toMatchObject({
      status: "cancelled",
      stoppedAt: "wait",
    });
  });

  it("a run flagged (unheard) while its taker waits ends cancelled when the grace period ends", async () => {
    const { engine, state } = engineWithWaitingStep();
    const dead = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    const { workflow, run } = waitingWorkflowAndRun();
    workflow.steps[0] = { ...(workflow.steps[0] as Workflow["steps"][number]), functionId: "test::never" };
    await state.set(workflowsScope("realm-default"), workflow.id, workflow);
    hold(dead.leases, run);
    await startRun(state, run);

    let monotonic = 0;
    const taker = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS, () => monotonic);
    // Flagged from another node as the taker looks for the run's functions, with no lease tick after.
    taker.control.deps.trigger = async (request) => {
      if (request.function_id === "engine::functions::list") {
        const current = await state.get<StoredRun>(RUNS_SCOPE, run.runId);
        await state.set(RUNS_SCOPE, run.runId, { ...current, cancelRequested: true });
      }
      return engine.trigger(request);
    };
    const resume = { state, control: taker.control, graceMs: 0, warn: () => undefined };
    expect(await resumeRuns(resume)).toBe(0);
    monotonic += LEASE_MS;
    expect(await resumeRuns(resume)).toBe(1);
    await eventually(() => taker.events.length > 0);
    expect(taker.events).toEqual(["cancelled"]);
    expect(await state.get<StoredRun>(RUNS_SCOPE, run.runId)).toMatchObject({ status: "cancelled" });
  });
});
