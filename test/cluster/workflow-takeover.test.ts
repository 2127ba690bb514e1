import type { IIIClient } from "iii-sdk";
import { Client } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { type AgentOS, createAgentOS } from "../../src/app.ts";
import { dropSchema, findTestPostgres, uniqueSchema } from "../engine/state/contract.ts";
import { CLUSTER_ADMIN_KEY as KEY, nodeConfig } from "../helpers/cluster.ts";
import { connectWorker, eventually } from "../helpers/iii.ts";
import { makeDataDir, removeDir, type ServeProcess, startServe } from "../helpers/process.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping the workflow takeover test: ${found.reason}`);

const LEASE_MS = "3000";
const VAULT_KEY = "cd".repeat(32);
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
});

describe.skipIf(found.url === null)("a workflow run outlives its node", () => {
  it("is taken over by a live node when its node is killed: completed steps never run again", async () => {
    const url = found.url ?? "";
    const schema = uniqueSchema();
    const admin = new Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.end();
    cleanups.push(() => dropSchema(url, schema));
    const scopedUrl = `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const env = {
      AGENTOS_DATABASE_URL: scopedUrl,
      AGENTOS_VAULT_KEY: VAULT_KEY,
      AGENTOS_WORKFLOW_LEASE_MS: LEASE_MS,
      AGENTOS_API_KEY: KEY,
      AGENTOS_RATE_LIMITS: "off",
    };

    // Node 1 is a process we can kill -9; its step function lives in a remote worker (this process).
    const dataDir = makeDataDir();
    cleanups.push(() => removeDir(dataDir));
    const first: ServeProcess = await startServe({ dataDir, env });
    cleanups.push(() => first.stop("SIGKILL"));
    const counts: Record<string, number> = {};
    const step = async (data: { prompt: string }) => {
      counts[data.prompt] = (counts[data.prompt] ?? 0) + 1;
      if (data.prompt === "slow") await new Promise((resolve) => setTimeout(resolve, 1500));
      return `${data.prompt} done`;
    };
    const worker: IIIClient = connectWorker(`ws://127.0.0.1:${first.enginePort}`, "takeover-steps");
    cleanups.push(() => worker.shutdown());
    worker.registerFunction("takeover::step", step);

    // Node 2 runs in this process, with the same function registered locally.
    const dirs: string[] = [];
    const second: AgentOS = await createAgentOS(nodeConfig({ ...env, AGENTOS_LOG_LEVEL: "silent" }, dirs));
    cleanups.push(async () => {
      await second.close();
      for (const dir of dirs) removeDir(dir);
    });
    second.engine.registerFunction("takeover-test", { id: "takeover::step" }, (payload) =>
      step(payload as { prompt: string }),
    );

    const steps = ["a", "b", "slow", "d"].map((name) => ({
      name,
      functionId: "takeover::step",
      promptTemplate: name,
    }));
    const created = await first.request("/api/workflows", {
      method: "POST",
      key: KEY,
      json: { id: "takeover", name: "takeover", steps },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    // Wait until node 1 sees the remote worker's function, then start the run there and kill it mid-step.
    await eventually(async () => {
      const info = await first.request("/api/workflows/run", {
        method: "POST",
        key: KEY,
        json: { workflowId: "takeover", input: null },
      });
      return info.status === 200;
    }, 10_000);
    for (const name of Object.keys(counts)) delete counts[name];
    void first
      .request("/api/workflows/run", { method: "POST", key: KEY, json: { workflowId: "takeover" } })
      .catch(() => null);
    await eventually(() => counts.slow === 1, 10_000);
    await first.stop("SIGKILL");

    // Node 2 takes it over once the lease lapses and finishes it.
    const run = await eventually(async () => {
      const response = await second.http.inject({
        method: "GET",
        url: "/api/workflows/takeover/runs",
        headers: { authorization: `Bearer ${KEY}` },
      });
      const page = response.json() as {
        runs: Array<{ runId: string; status: string; owner?: string; results: Array<{ stepName: string }> }>;
      };
      const latest = page.runs[0];
      return latest?.status === "completed" ? latest : undefined;
    }, 20_000);
    expect(run.results.map((result) => result.stepName)).toEqual(["a", "b", "slow", "d"]);
    // a and b completed on node 1 and never ran again; the step in flight ran again; d ran once.
    expect(counts).toEqual({ a: 1, b: 1, slow: 2, d: 1 });
  }, 60_000);
});
