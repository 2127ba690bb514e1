import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AgentOS, createAgentOS } from "../../src/app.ts";
import { loadConfig } from "../../src/config/env.ts";
import { stateClient } from "../../src/engine/state/client.ts";
import { ACTIVE_SCOPE, RUNS_SCOPE } from "../../src/workers/workflow/store.ts";
import { createAgent, newRealm } from "../helpers/control-plane.ts";
import { runCli } from "../helpers/process.ts";
import { json, startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * CLI commands open the same data dir as a running server. They must not do the server's background
 * work: no pulse scheduled, no pulse lease recovered (which would fail the server's live run as
 * "interrupted"), no workflow run resumed.
 */
let server: TestServer;
/** Resolves the agent turn the pulse run is waiting on. */
let finishTurn: (reply: { content: string }) => void;
let turnStarted: Promise<void>;

beforeEach(async () => {
  server = await startTestServer();
  // A stand-in agent turn the test ends when it wants: the pulse run stays in flight until then.
  let started: () => void = () => undefined;
  turnStarted = new Promise((resolve) => (started = resolve));
  server.service.engine.worker("probe").registerFunction({ id: "agent::chat" }, () => {
    started();
    return new Promise((resolve) => (finishTurn = resolve));
  });
});
afterEach(async () => {
  finishTurn?.({ content: "done" });
  await server.close();
});

const state = () => stateClient((request) => server.service.engine.trigger(request));

/** A registered pulse and a manual run of it, in flight. */
async function runInFlight() {
  const realmId = await newRealm(server);
  const agentId = await createAgent(server, realmId);
  const registered = await server.request("/api/pulse/register", {
    method: "POST",
    json: { realmId, agentId, cron: "0 0 0 1 1 *" },
  });
  expect(registered.status).toBe(200);
  const invoked = server.request("/api/pulse/invoke", { method: "POST", json: { realmId, agentId } });
  await turnStarted;
  const key = `${realmId}/${agentId}`;
  const lease = await state().getVersioned<{ runKey?: string }>("pulse_leases", key);
  expect(lease?.value.runKey).toBeDefined();
  const runKey = lease?.value.runKey as string;
  const run = () => state().get<{ status: string }>(`pulse_runs:${realmId}`, runKey);
  expect(await run()).toMatchObject({ status: "Running" });
  return { realmId, agentId, key, lease, run, invoked };
}

/** The run finishes normally once its turn answers: nobody else ended it. */
async function expectFinishesNormally(flight: Awaited<ReturnType<typeof runInFlight>>) {
  finishTurn({ content: "all quiet" });
  const response = await flight.invoked;
  expect(response.status).toBe(200);
  expect(await json(response)).toMatchObject({ status: "Completed", output: "all quiet" });
  expect(await state().get("pulse_leases", flight.key)).toBeNull();
}

describe("CLI commands on the data dir of a running server", () => {
  it("agentos keys list leaves a live pulse run's lease and status alone", async () => {
    const flight = await runInFlight();
    const result = await runCli(["keys", "list"], {
      AGENTOS_DATA_DIR: server.dataDir,
      AGENTOS_LOG_LEVEL: "warn",
    });
    expect(result.code, result.stderr).toBe(0);
    expect(await state().getVersioned("pulse_leases", flight.key)).toEqual(flight.lease);
    expect(await flight.run()).toMatchObject({ status: "Running" });
    await expectFinishesNormally(flight);
  }, 30_000);
});

describe("createAgentOS with background: false", () => {
  let second: AgentOS | undefined;
  afterEach(async () => {
    await second?.close();
    second = undefined;
  });

  const openSecond = async () => {
    const config = loadConfig({ AGENTOS_DATA_DIR: server.dataDir, AGENTOS_LOG_LEVEL: "silent" });
    second = await createAgentOS(config, { bootstrapAdminKey: false, background: false });
    return second;
  };

  it("schedules no pulse, recovers no lease and resumes no workflow run, but its functions work", async () => {
    const flight = await runInFlight();
    // A workflow run left "running" (its workflow is gone): resuming it would mark it interrupted.
    const leftRunning = {
      runId: "wfr-left",
      workflowId: "wf-gone",
      status: "running",
      input: {},
      vars: {},
      position: 0,
      startedAt: "2020-01-01T00:00:00.000Z",
      resultCount: 0,
    };
    await state().set(RUNS_SCOPE, leftRunning.runId, leftRunning);
    await state().set(ACTIVE_SCOPE, leftRunning.runId, { workflowId: leftRunning.workflowId });

    const cli = await openSecond();
    const kinds = cli.engine.triggers.list().map((t) => `${t.type} ${t.function_id}`);
    expect(kinds.filter((kind) => kind.startsWith("cron"))).toEqual([]);
    expect(kinds).not.toContain("subscribe pulse::sync");
    // The server keeps its own trigger.
    expect(server.service.engine.triggers.list().filter((t) => t.function_id === "pulse::tick")).toHaveLength(
      1,
    );
    // Its functions answer on the shared storage.
    const status = (await cli.engine.trigger({
      function_id: "pulse::status",
      payload: { realmId: flight.realmId, agentId: flight.agentId },
    })) as { recentRuns: Array<{ status: string }> };
    expect(status.recentRuns[0]).toMatchObject({ status: "Running" });
    // Give a start-up recovery or resume every chance to have happened.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cli.close();
    second = undefined;

    expect(await state().getVersioned("pulse_leases", flight.key)).toEqual(flight.lease);
    expect(await flight.run()).toMatchObject({ status: "Running" });
    expect(await state().get(RUNS_SCOPE, leftRunning.runId)).toMatchObject({ status: "running" });
    expect(await state().get(ACTIVE_SCOPE, leftRunning.runId)).not.toBeNull();
    await expectFinishesNormally(flight);
  });
});
