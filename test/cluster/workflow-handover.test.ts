import { afterEach, describe, expect, it } from "vitest";
import type { AgentOS } from "../../src/app.ts";
import { stateClient } from "../../src/engine/state/client.ts";
import { RUNS_SCOPE, type StoredRun } from "../../src/workers/workflow/store.ts";
import { findTestPostgres } from "../engine/state/contract.ts";
import { type Cluster, CLUSTER_ADMIN_KEY as KEY, startCluster } from "../helpers/cluster.ts";
import { eventually } from "../helpers/iii.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping the workflow handover test: ${found.reason}`);

// Ten minutes: no lease lapses within the test, so only a release explains a take-over.
const ENV = { AGENTOS_WORKFLOW_LEASE_MS: "600000", AGENTOS_RATE_LIMITS: "off" };
let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

/**
 * Two nodes with steps a, slow, c of `handover::step` on both (calls counted by name across them); the
 * first call of "slow" waits until the test lets it end. A run is started on the first node and waits in
 * "slow".
 */
async function runWaitingInSlowStep(url: string) {
  cluster = await startCluster(url, 2, ENV);
  const [first, second] = cluster.nodes as [AgentOS, AgentOS];
  const counts: Record<string, number> = {};
  let entered: () => void = () => undefined;
  const slowEntered = new Promise<void>((resolve) => {
    entered = resolve;
  });
  let finish: () => void = () => undefined;
  const slowDone = new Promise<void>((resolve) => {
    finish = resolve;
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
  for (const node of [first, second])
    node.engine.registerFunction("handover-test", { id: "handover::step" }, step);
  const steps = ["a", "slow", "c"].map((name) => ({
    name,
    functionId: "handover::step",
    promptTemplate: name,
  }));
  const headers = { authorization: `Bearer ${KEY}` };
  const created = await first.http.inject({
    method: "POST",
    url: "/api/workflows",
    headers,
    payload: { id: "handover", name: "handover", steps },
  });
  expect(created.statusCode, created.body).toBe(201);
  const started = await first.http.inject({
    method: "POST",
    url: "/api/workflows/run",
    headers,
    payload: { workflowId: "handover", input: null, async: true },
  });
  expect(started.statusCode, started.body).toBe(202);
  const { runId } = started.json() as { runId: string };
  await slowEntered;
  const state = stateClient((request) => second.engine.trigger(request));
  const record = () => state.get<StoredRun>(RUNS_SCOPE, runId);
  const ownerA = (await record())?.owner;
  expect(ownerA).toEqual(expect.any(String));
  // Closed here; the cluster's close would close it again.
  cluster.nodes.splice(cluster.nodes.indexOf(first), 1);
  const tick = () => second.engine.trigger({ function_id: "workflow::lease_tick", payload: {} });
  return { first, second, counts, finish, record, ownerA, tick };
}

describe.skipIf(found.url === null)("a workflow run handed over on a clean shutdown", () => {
  it("stops between steps on its node's close and is taken over by the other node at its next tick", async () => {
    const { first, counts, finish, record, ownerA, tick } = await runWaitingInSlowStep(found.url ?? "");
    const closing = first.close();
    finish();
    await closing;
    const released = await record();
    expect(released).toMatchObject({ status: "running", position: 2, resultCount: 2, released: true });
    expect(released?.owner).toBeUndefined();

    // The other node's next lease tick (forced here: with a ten-minute lease it comes each minute).
    await tick();
    await eventually(async () => (await record())?.status === "completed", 10_000);
    const done = await record();
    // Taken over by the other node, the only one left.
    expect(done?.owner).toEqual(expect.any(String));
    expect(done?.owner).not.toBe(ownerA);
    expect(done).toMatchObject({ resultCount: 3 });
    expect(done?.released).toBeUndefined();
    // Each step ran exactly once, across both nodes.
    expect(counts).toEqual({ a: 1, slow: 1, c: 1 });
  }, 60_000);

  it("leaves a run whose step is still in flight when the close's wait ends to its lease", async () => {
    const { first, counts, finish, record, ownerA, tick } = await runWaitingInSlowStep(found.url ?? "");
    await first.close();
    const kept = await record();
    expect(kept).toMatchObject({ status: "running", position: 1, owner: ownerA });
    expect(kept?.released).toBeUndefined();
    expect(await tick()).toEqual({ takenOver: 0 });
    expect(await tick()).toEqual({ takenOver: 0 });
    finish();
    expect(counts).toEqual({ a: 1, slow: 1 });
  }, 60_000);
});
