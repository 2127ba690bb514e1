import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startFakeOpenAI } from "../test/helpers/fake-openai.ts";
import { connectWorker } from "../test/helpers/iii.ts";
import { makeDataDir, removeDir, type ServeProcess, startServe } from "../test/helpers/process.ts";
import { percentile } from "./util.ts";

/**
 * `npm run soak [-- --duration 120 --concurrency 8 --interval 5]`: a mixed load (agent messages on the
 * instant fake model, workflow runs, spends, memory queries, vault writes) against a real service
 * process, printing requests, errors, p99 and the service's RSS every interval. Target (issue #22):
 * zero errors, and RSS flat after warm-up: over the second half, the least-squares trend of RSS adds
 * no more than 8 MiB or 5 % of its mean, whichever is larger. KG and webhooks join the mix as they land.
 */
const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "60" },
    concurrency: { type: "string", default: "8" },
    interval: { type: "string", default: "5" },
  },
});
const DURATION_S = Number(values.duration);
const CONCURRENCY = Number(values.concurrency);
const INTERVAL_S = Number(values.interval);
const KEY = "soak-admin-key-0123456789abcdef";

interface Sample {
  t: number;
  requests: number;
  errors: number;
  p99: number;
  rssMb: number;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

async function call(server: ServeProcess, method: string, path: string, body?: unknown): Promise<number> {
  const response = await server.request(path, {
    method,
    key: KEY,
    ...(body === undefined ? {} : { json: body }),
    signal: AbortSignal.timeout(30_000),
  });
  await response.arrayBuffer();
  return response.status;
}

/** The mix: each action returns the status it got; a status ≥ 400 counts as an error. */
function actions(server: ServeProcess, agentId: string): Array<(i: number) => Promise<number>> {
  return [
    (i) => call(server, "POST", `/api/agents/${agentId}/message`, { message: `hello, note ${i % 500}` }),
    (i) => call(server, "POST", `/api/agents/${agentId}/memory`, { query: `note ${i % 500}` }),
    () => call(server, "POST", "/api/workflows/run", { workflowId: "soak", input: "x" }),
    (i) =>
      call(server, "POST", "/api/ledger/spend", {
        realmId: "realm-default",
        agentId,
        costCents: 0.01,
        provider: "openai",
        model: "gpt-4o",
        inputTokens: 1,
        outputTokens: 1,
        eventId: `soak-${Date.now()}-${i}`,
      }),
    (i) => call(server, "POST", "/api/vault", { key: `soak-secret-${i % 50}`, value: `v${i}` }),
  ];
}

/** Slope of y over x by least squares. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const num = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const den = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

async function main(): Promise<void> {
  const fake = await startFakeOpenAI();
  const dataDir = makeDataDir();
  const server = await startServe({
    dataDir,
    env: {
      AGENTOS_API_KEY: KEY,
      AGENTOS_RATE_LIMITS: "off",
      OPENAI_API_KEY: "sk-soak",
      OPENAI_BASE_URL: fake.baseUrl,
    },
  });
  const worker = connectWorker(`ws://127.0.0.1:${server.enginePort}`, "soak-steps");
  worker.registerFunction("soak::echo", async (data: { prompt?: string }) => `echo ${data.prompt ?? ""}`);
  try {
    const created = await server.request("/api/agents", {
      method: "POST",
      key: KEY,
      json: { name: "soak", model: "gpt-4o" },
    });
    const { id: agentId } = (await created.json()) as { id: string };
    const steps = [
      { name: "a", functionId: "soak::echo", promptTemplate: "{{input}}" },
      { name: "b", functionId: "soak::echo" },
    ];
    await server.request("/api/workflows", {
      method: "POST",
      key: KEY,
      json: { id: "soak", name: "soak", steps },
    });
    // The remote worker's function is there once a run succeeds.
    for (
      let tries = 0;
      (await call(server, "POST", "/api/workflows/run", { workflowId: "soak" })) !== 200;
      tries++
    ) {
      if (tries > 100) throw new Error("soak: the workflow step function never became available");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const mix = actions(server, agentId);
    const pid = server.child.pid as number;
    const started = performance.now();
    const deadline = started + DURATION_S * 1000;
    let latencies: number[] = [];
    let requests = 0;
    let errors = 0;
    let next = 0;
    const failures = new Map<string, number>();
    const lane = async () => {
      while (performance.now() < deadline) {
        const i = next++;
        const action = mix[i % mix.length] as (i: number) => Promise<number>;
        const begin = performance.now();
        const status = await action(i).catch(() => 0);
        latencies.push(performance.now() - begin);
        requests++;
        if (status === 0 || status >= 400) {
          errors++;
          const label = `action ${i % mix.length} → ${status}`;
          failures.set(label, (failures.get(label) ?? 0) + 1);
        }
      }
    };
    const samples: Sample[] = [];
    const ticker = setInterval(() => {
      const sorted = [...latencies].sort((a, b) => a - b);
      const sample = {
        t: Math.round((performance.now() - started) / 1000),
        requests,
        errors,
        p99: sorted.length > 0 ? percentile(sorted, 99) : 0,
        rssMb: rssMb(pid),
      };
      samples.push(sample);
      latencies = [];
      console.log(
        `t=${String(sample.t).padStart(4)} s  requests ${String(requests).padStart(7)}  errors ${errors}  p99 ${sample.p99.toFixed(1)} ms  RSS ${sample.rssMb.toFixed(1)} MiB`,
      );
    }, INTERVAL_S * 1000);
    console.log(
      `soak: ${DURATION_S} s, ${CONCURRENCY} clients, mix: message, memory, workflow run, spend, vault`,
    );
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
    clearInterval(ticker);

    const second = samples.slice(Math.floor(samples.length / 2));
    const trend = slope(second.map((sample) => [sample.t, sample.rssMb])) * (DURATION_S / 2);
    const mean = second.reduce((sum, sample) => sum + sample.rssMb, 0) / Math.max(1, second.length);
    const allowed = Math.max(8, mean * 0.05);
    const flat = second.length >= 2 && trend <= allowed;
    console.log(`\nrequests ${requests} (${(requests / DURATION_S).toFixed(0)}/s), errors ${errors}`);
    for (const [label, count] of failures) console.log(`  ${label}: ${count}`);
    console.log(
      `RSS over the second half: trend ${trend >= 0 ? "+" : ""}${trend.toFixed(1)} MiB (allowed ${allowed.toFixed(1)}), mean ${mean.toFixed(1)} MiB`,
    );
    console.log(`target zero errors and flat RSS: ${errors === 0 && flat ? "met" : "MISSED"}`);
  } finally {
    await worker.shutdown();
    await server.stop("SIGTERM").catch(() => server.stop("SIGKILL"));
    await fake.close();
    removeDir(dataDir);
  }
}

await main();
