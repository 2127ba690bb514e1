import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { InvocationContext } from "../../../src/engine/types.ts";
import { nowMs } from "../../../src/shared/clock.ts";
import { handOver } from "../../../src/workers/workflow/handover.ts";
import { hold, renewLeases } from "../../../src/workers/workflow/lease.ts";
import { resumeRuns } from "../../../src/workers/workflow/resume.ts";
import { cancelRun, execute, retryRun, startWorkflowRun } from "../../../src/workers/workflow/runs.ts";
import type { Run, Workflow } from "../../../src/workers/workflow/schema.ts";
import { RUNS_SCOPE, type StoredRun, startRun, workflowsScope } from "../../../src/workers/workflow/store.ts";
import { createStateEngine } from "../../helpers/engine.ts";
import { eventually } from "../../helpers/iii.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";
import { clusterNode } from "./cluster-node.ts";

// Ten minutes: within a test, no lease lapses, so only a release explains a take-over.
const LEASE_MS = 600_000;
const ADMIN: InvocationContext = {
  functionId: "workflow::cancel",
  auth: { kind: "admin", keyId: "k" },
  signal: new AbortController().signal,
};

let setup: ReturnType<typeof createStateEngine> | undefined;
const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await setup?.close();
  setup = undefined;
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * Steps a, slow, c of `test::step` (counting calls by name); "slow" waits until the test lets it end. A
 * run of them is started on a node and waits in "slow" (`awaited`: as a synchronous caller's run).
 */
async function threeSteps(awaited = false) {
  setup = createStateEngine();
  const { engine, state } = setup;
  const counts: Record<string, number> = {};
  let entered: () => void = () => undefined;
  const slowEntered = new Promise<void>((resolve) => {
    entered = resolve;
  });
  let finish: () => void = () => undefined;
  const slowDone = new Promise<void>((resolve) => {
    finish = resolve;
  });
  engine.worker("test").registerFunction({ id: "test::step" }, async (payload) => {
    const { prompt } = payload as { prompt: string };
    counts[prompt] = (counts[prompt] ?? 0) + 1;
    if (prompt === "slow" && counts.slow === 1) {
      entered();
      await slowDone;
    }
    return `${prompt} done`;
  });
  const now = new Date().toISOString();
  const workflow = {
    id: "wf",
    name: "wf",
    realmId: "realm-default",
    version: 1,
    author: { kind: "admin", keyId: "k" },
    createdAt: now,
    updatedAt: now,
    steps: ["a", "slow", "c"].map((name) => ({
      name,
      functionId: "test::step",
      promptTemplate: name,
      mode: "sequential",
      errorMode: "fail",
      maxRetries: 0,
    })),
  } as Workflow;
  await state.set(workflowsScope("realm-default"), workflow.id, workflow);
  const run: Run = {
    runId: `run-${Math.random().toString(36).slice(2)}`,
    workflowId: "wf",
    workflowVersion: 1,
    realmId: "realm-default",
    principal: { kind: "admin", keyId: "k" },
    status: "running",
    input: null,
    results: [],
    vars: { input: null },
    position: 0,
    startedAt: now,
  };
  const owner = clusterNode(setup, LEASE_MS);
  hold(owner.leases, run);
  await startRun(state, run);
  const finished = execute(owner.control, workflow, run, awaited).catch((error: unknown) => error);
  await slowEntered;
  return { state, counts, run, owner, finished, finish };
}

const resumeOn = (node: ReturnType<typeof clusterNode>) =>
  resumeRuns({ state: node.control.state, control: node.control, graceMs: 0, warn: () => undefined });

describe("a run handed over on a clean shutdown", () => {
  it("stops after its step in flight and is released: another node takes it over at its first look", async () => {
    const { state, counts, run, owner, finished, finish } = await threeSteps();
    const handing = handOver(owner.control, nowMs() + 60_000);
    finish();
    expect(await handing).toEqual({ released: 1, inFlight: 0 });
    expect(await finished).toMatchObject({ status: "running", position: 2 });
    const released = await state.get<StoredRun>(RUNS_SCOPE, run.runId);
    expect(released).toMatchObject({ status: "running", position: 2, released: true });
    expect(released?.owner).toBeUndefined();
    // The old owner renews it no more.
    await renewLeases(state, owner.leases);
    expect((await state.get<StoredRun>(RUNS_SCOPE, run.runId))?.owner).toBeUndefined();

    // No clock moved: only the release lets the other node take it now.
    const taker = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    expect(await resumeOn(taker)).toBe(1);
    await eventually(async () => (await state.get<StoredRun>(RUNS_SCOPE, run.runId))?.status === "completed");
    const done = await state.get<StoredRun>(RUNS_SCOPE, run.runId);
    expect(done).toMatchObject({ owner: taker.leases.nodeId, resultCount: 3 });
    expect(done?.released).toBeUndefined();
    expect(counts).toEqual({ a: 1, slow: 1, c: 1 });
  });

  it("keeps the lease of a run whose step is still in flight when the wait ends", async () => {
    const { state, counts, run, owner, finished, finish } = await threeSteps();
    expect(await handOver(owner.control, nowMs() + 50)).toEqual({ released: 0, inFlight: 1 });
    const kept = await state.get<StoredRun>(RUNS_SCOPE, run.runId);
    expect(kept).toMatchObject({ status: "running", position: 1, owner: owner.leases.nodeId });
    expect(kept?.released).toBeUndefined();
    const taker = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    expect(await resumeOn(taker)).toBe(0);

    // The step ends after the hand-over: checkpointed, the run stops there, still this node's.
    finish();
    expect(await finished).toMatchObject({ status: "running", position: 2 });
    expect(await state.get<StoredRun>(RUNS_SCOPE, run.runId)).toMatchObject({ owner: owner.leases.nodeId });
    expect(await resumeOn(taker)).toBe(0);
    expect(counts).toEqual({ a: 1, slow: 1 });
  });

  it("a released run cancelled from any node ends cancelled at once, and nobody runs it again", async () => {
    const { state, counts, run, owner, finish } = await threeSteps();
    const handing = handOver(owner.control, nowMs() + 60_000);
    finish();
    expect(await handing).toMatchObject({ released: 1 });
    const other = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    expect(await cancelRun(other.control, run.runId, ADMIN)).toMatchObject({ status: "cancelled" });
    expect(await resumeOn(other)).toBe(0);
    expect(await state.get<StoredRun>(RUNS_SCOPE, run.runId)).toMatchObject({ status: "cancelled" });
    expect(counts).toEqual({ a: 1, slow: 1 });
  });

  it("a run flagged cancelled while its step is in flight ends cancelled on its node, never released", async () => {
    const { state, counts, run, owner, finished, finish } = await threeSteps();
    // A cancel flag set on another node reaches the owner at its checkpoint: it ends cancelled, unreleased.
    const other = clusterNode(setup as NonNullable<typeof setup>, LEASE_MS);
    expect(await cancelRun(other.control, run.runId, ADMIN)).toMatchObject({ cancelRequested: true });
    const handing = handOver(owner.control, nowMs() + 60_000);
    finish();
    expect(await handing).toEqual({ released: 0, inFlight: 0 });
    await finished;
    expect(await state.get<StoredRun>(RUNS_SCOPE, run.runId)).toMatchObject({
      status: "cancelled",
      owner: owner.leases.nodeId,
    });
    expect(await resumeOn(other)).toBe(0);
    expect(counts).toEqual({ a: 1, slow: 1 });
  });
});

describe("a node shutting down", () => {
  it("runs a synchronous caller's run on to its end (a parent run's step waits for it), never releasing it", async () => {
    const { state, counts, run, owner, finished, finish } = await threeSteps(true);
    const handing = handOver(owner.control, nowMs() + 60_000);
    finish();
    expect(await handing).toEqual({ released: 0, inFlight: 0 });
    expect(await finished).toMatchObject({ status: "completed" });
    expect(await state.get<StoredRun>(RUNS_SCOPE, run.runId)).toMatchObject({ status: "completed" });
    expect(counts).toEqual({ a: 1, slow: 1, c: 1 });
  });

  it("starts no run and retries none: another node (or the restarted one) does", async () => {
    setup = createStateEngine();
    const node = clusterNode(setup, LEASE_MS);
    node.control.drain.active = true;
    const ctx = { ...ADMIN, functionId: "workflow::run" };
    await expect(startWorkflowRun(node.control, { workflowId: "wf" }, ctx)).rejects.toMatchObject({
      code: "unavailable",
    });
    const failed = { runId: "run-failed", workflowId: "wf", status: "failed", input: null, results: [] };
    await setup.state.set(RUNS_SCOPE, failed.runId, {
      ...failed,
      vars: {},
      position: 0,
      startedAt: "x",
      resultCount: 0,
    });
    await expect(retryRun(node.control, failed.runId, ctx)).rejects.toMatchObject({ code: "unavailable" });
  });
});

describe("a run on a single node (embedded) closed cleanly", () => {
  it("stops after its step in flight, starts no other step, and resumes there at the restart", async () => {
    const counts: Record<string, number> = {};
    let finish: () => void = () => undefined;
    const slowDone = new Promise<void>((resolve) => {
      finish = resolve;
    });
    let entered: () => void = () => undefined;
    const slowEntered = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const step = async (payload: unknown) => {
      const { prompt } = payload as { prompt: string };
      counts[prompt] = (counts[prompt] ?? 0) + 1;
      if (prompt === "slow" && counts.slow === 1) {
        entered();
        await slowDone;
      }
      return `${prompt} done`;
    };
    const first = await startTestServer();
    dirs.push(first.dataDir);
    first.service.engine.registerFunction("handover-test", { id: "handover::step" }, step);
    const steps = ["a", "slow", "c"].map((name) => ({
      name,
      functionId: "handover::step",
      promptTemplate: name,
    }));
    const created = await first.request("/api/workflows", {
      method: "POST",
      json: { id: "wf", name: "wf", steps },
    });
    expect(created.status).toBe(201);
    const started = await first.request("/api/workflows/run", {
      method: "POST",
      json: { workflowId: "wf", input: null, async: true },
    });
    expect(started.status).toBe(202);
    const { runId } = (await started.json()) as { runId: string };
    await slowEntered;
    const closing = first.service.close();
    finish();
    await closing;
    expect(counts).toEqual({ a: 1, slow: 1 });

    const second = await startTestServer({}, { dataDir: first.dataDir });
    servers.push(second);
    second.service.engine.registerFunction("handover-test", { id: "handover::step" }, step);
    await eventually(async () => {
      const response = await second.request(`/api/workflows/runs/${runId}`);
      return ((await response.json()) as { status: string }).status === "completed";
    }, 10_000);
    expect(counts).toEqual({ a: 1, slow: 1, c: 1 });
  });
});
