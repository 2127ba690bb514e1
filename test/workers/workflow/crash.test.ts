import type { IIIClient } from "iii-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { connectWorker, eventually } from "../../helpers/iii.ts";
import { makeDataDir, removeDir, type ServeProcess, startServe, stopAll } from "../../helpers/process.ts";

const KEY = "crash-admin-key-0123456789";
// The tests poll; rate limits are counted in the data directory and would outlast the restart.
const ENV = { AGENTOS_API_KEY: KEY, AGENTOS_RATE_LIMITS: "off" };
const servers: ServeProcess[] = [];
const dirs: string[] = [];
const workers: IIIClient[] = [];

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.shutdown();
  await stopAll(servers);
  for (const dir of dirs.splice(0)) removeDir(dir);
});

type RunPage = { runs: Array<{ status: string; results: Array<{ stepName: string }>; runId: string }> };

/** The steps' function, in a remote worker (this test process), so it outlives the server; counts calls. */
function stepWorker(enginePort: number, counts: Record<string, number>): IIIClient {
  const worker = connectWorker(`ws://127.0.0.1:${enginePort}`, "crash-steps");
  workers.push(worker);
  worker.registerFunction("crash::step", async (data: { prompt: string }) => {
    counts[data.prompt] = (counts[data.prompt] ?? 0) + 1;
    if (data.prompt === "slow") await new Promise((resolve) => setTimeout(resolve, 1500));
    return `${data.prompt} done`;
  });
  return worker;
}

/** A server running workflow "crashy" (a, b, slow, d), killed with -9 while "slow" is in flight. */
async function killMidRun(counts: Record<string, number>) {
  const dataDir = makeDataDir();
  dirs.push(dataDir);
  const first = await startServe({ dataDir, env: ENV });
  servers.push(first);
  stepWorker(first.enginePort, counts);
  // The worker may still be registering its function when the workflows are written.
  const steps = ["a", "b", "slow", "d"].map((name) => ({
    name,
    functionId: "crash::step",
    promptTemplate: name,
    optional: true,
  }));
  const created = await first.request("/api/workflows", {
    method: "POST",
    key: KEY,
    json: { id: "crashy", name: "crashy", steps },
  });
  expect(created.status).toBe(201);
  // The worker is ready once a one-step probe workflow runs through it.
  const probe = [{ name: "probe", functionId: "crash::step", promptTemplate: "probe", optional: true }];
  await first.request("/api/workflows", {
    method: "POST",
    key: KEY,
    json: { id: "probe", name: "probe", steps: probe },
  });
  await eventually(async () => {
    const response = await first.request("/api/workflows/run", {
      method: "POST",
      key: KEY,
      json: { workflowId: "probe" },
    });
    return response.status === 200;
  });
  delete counts.probe;
  const started = await first.request("/api/workflows/run", {
    method: "POST",
    key: KEY,
    json: { workflowId: "crashy", input: null, async: true },
  });
  expect(started.status).toBe(202);
  await eventually(() => counts.slow === 1, 10_000);
  await first.stop("SIGKILL");
  return { dataDir, first };
}

async function latestRun(server: ServeProcess, status: string) {
  return eventually(async () => {
    const page = (await (await server.request("/api/workflows/crashy/runs", { key: KEY })).json()) as RunPage;
    const latest = page.runs[0];
    return latest?.status === status ? latest : undefined;
  }, 20_000);
}

describe("a workflow run survives kill -9", () => {
  it("resumes from its last checkpoint: earlier steps run once, the step in flight runs again", async () => {
    const counts: Record<string, number> = {};
    const { dataDir, first } = await killMidRun(counts);
    const second = await startServe({
      dataDir,
      port: first.port,
      enginePort: first.enginePort,
      env: ENV,
    });
    servers.push(second);
    const run = await latestRun(second, "completed");
    expect(run.results.map((result) => result.stepName)).toEqual(["a", "b", "slow", "d"]);
    expect(counts).toEqual({ a: 1, b: 1, slow: 2, d: 1 });
    const record = (await (
      await second.request(`/api/workflows/runs/${run.runId}`, { key: KEY })
    ).json()) as { status: string };
    expect(record.status).toBe("completed");
  });

  it("is interrupted when its functions do not come back, and a retry finishes it without rerunning completed steps", async () => {
    const counts: Record<string, number> = {};
    const { dataDir } = await killMidRun(counts);
    // Another engine port: the old worker cannot reconnect, so the run's function is missing.
    const second = await startServe({
      dataDir,
      env: { ...ENV, AGENTOS_WORKFLOW_RESUME_GRACE_MS: "300" },
    });
    servers.push(second);
    const interrupted = await latestRun(second, "interrupted");
    expect(interrupted.results.map((result) => result.stepName)).toEqual(["a", "b"]);
    stepWorker(second.enginePort, counts);
    const retried = await eventually(async () => {
      const response = await second.request(`/api/workflows/runs/${interrupted.runId}/retry`, {
        method: "POST",
        key: KEY,
      });
      return response.status === 202 ? response.json() : undefined;
    });
    expect(retried).toMatchObject({ runId: interrupted.runId, status: "running", retries: 1 });
    const run = await latestRun(second, "completed");
    expect(run.results.map((result) => result.stepName)).toEqual(["a", "b", "slow", "d"]);
    expect(counts).toEqual({ a: 1, b: 1, slow: 2, d: 1 });
    const again = await second.request(`/api/workflows/runs/${run.runId}/retry`, {
      method: "POST",
      key: KEY,
    });
    expect(again.status).toBe(409);
  });
});
