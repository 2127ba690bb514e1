import type { IIIClient } from "iii-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { connectWorker, eventually } from "../../helpers/iii.ts";
import { makeDataDir, removeDir, type ServeProcess, startServe, stopAll } from "../../helpers/process.ts";

const KEY = "crash-admin-key-0123456789";
const servers: ServeProcess[] = [];
const dirs: string[] = [];
let worker: IIIClient | undefined;

afterEach(async () => {
  await worker?.shutdown();
  await stopAll(servers);
  for (const dir of dirs.splice(0)) removeDir(dir);
});

describe("a workflow run survives kill -9", () => {
  it("resumes from its last checkpoint: earlier steps run once, the step in flight runs again", async () => {
    const dataDir = makeDataDir();
    dirs.push(dataDir);
    const first = await startServe({ dataDir, env: { AGENTOS_API_KEY: KEY } });
    servers.push(first);
    // The steps' functions live in a remote worker (this test process), so they outlive the server.
    const counts: Record<string, number> = {};
    worker = connectWorker(`ws://127.0.0.1:${first.enginePort}`, "crash-steps");
    worker.registerFunction("crash::step", async (data: { prompt: string }) => {
      counts[data.prompt] = (counts[data.prompt] ?? 0) + 1;
      if (data.prompt === "slow") await new Promise((resolve) => setTimeout(resolve, 1500));
      return `${data.prompt} done`;
    });
    const steps = ["a", "b", "slow", "d"].map((name) => ({
      name,
      functionId: "crash::step",
      promptTemplate: name,
    }));
    const created = await first.request("/api/workflows", {
      method: "POST",
      key: KEY,
      json: { id: "crashy", name: "crashy", steps },
    });
    expect(created.status).toBe(201);
    // The worker is ready once a one-step probe workflow runs through it.
    const probe = [{ name: "probe", functionId: "crash::step", promptTemplate: "probe" }];
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
    void first
      .request("/api/workflows/run", {
        method: "POST",
        key: KEY,
        json: { workflowId: "crashy", input: null },
      })
      .catch(() => null);
    await eventually(() => counts.slow === 1, 10_000);
    await first.stop("SIGKILL");

    const second = await startServe({
      dataDir,
      port: first.port,
      enginePort: first.enginePort,
      env: { AGENTOS_API_KEY: KEY },
    });
    servers.push(second);
    const run = await eventually(async () => {
      const page = (await (await second.request("/api/workflows/crashy/runs", { key: KEY })).json()) as {
        runs: Array<{ status: string; results: Array<{ stepName: string }>; runId: string }>;
      };
      const latest = page.runs[0];
      return latest?.status === "completed" ? latest : undefined;
    }, 20_000);
    expect(run.results.map((result) => result.stepName)).toEqual(["a", "b", "slow", "d"]);
    expect(counts).toEqual({ a: 1, b: 1, slow: 2, d: 1 });
    const record = (await (
      await second.request(`/api/workflows/runs/${run.runId}`, { key: KEY })
    ).json()) as { status: string };
    expect(record.status).toBe("completed");
  });
});
