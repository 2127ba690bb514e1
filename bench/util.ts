import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { type AgentOS, createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import type { Engine } from "../src/engine/engine.ts";

export interface Measurement {
  name: string;
  opsPerSec: number;
}

async function run(op: (i: number) => unknown, ms: number): Promise<number> {
  let count = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 500; i++) {
      // Synchronous baselines are not awaited: a microtask per call would flatter the subject.
      const result = op(count++);
      if (result instanceof Promise) await result;
    }
    elapsed = performance.now() - start;
  }
  return (count / elapsed) * 1000;
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The p-th percentile (0–100) of values sorted ascending, by the nearest-rank method. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export interface ConcurrentRound {
  opsPerSec: number;
  /** Milliseconds each completed call took, in completion order. */
  latencies: number[];
}

/**
 * Keeps `concurrency` calls outstanding for `ms`: that many loops, each awaiting one call at a time,
 * so a slow call delays only its own loop, as with independent callers. Calls still running at the
 * deadline are awaited and counted, and so is the time they take.
 */
export async function runConcurrent(
  op: () => Promise<unknown>,
  concurrency: number,
  ms: number,
): Promise<ConcurrentRound> {
  const latencies: number[] = [];
  const start = performance.now();
  const deadline = start + ms;
  const loop = async () => {
    while (performance.now() < deadline) {
      const callStart = performance.now();
      await op();
      latencies.push(performance.now() - callStart);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { opsPerSec: (latencies.length / (performance.now() - start)) * 1000, latencies };
}

/**
 * Runs two operations sequentially in alternating rounds after a warm-up, so drift on a noisy
 * machine affects both alike, and reports the median operations per second of each.
 */
export async function compare(
  baseline: { name: string; op: (i: number) => unknown },
  subject: { name: string; op: (i: number) => unknown },
  rounds = 7,
  roundMs = 400,
): Promise<{ baseline: Measurement; subject: Measurement }> {
  await run(baseline.op, roundMs);
  await run(subject.op, roundMs);
  const base: number[] = [];
  const sub: number[] = [];
  for (let round = 0; round < rounds; round++) {
    base.push(await run(baseline.op, roundMs));
    sub.push(await run(subject.op, roundMs));
  }
  return {
    baseline: { name: baseline.name, opsPerSec: median(base) },
    subject: { name: subject.name, opsPerSec: median(sub) },
  };
}

export function report(title: string, subject: Measurement, baseline: Measurement, target?: number): void {
  const ratio = subject.opsPerSec / baseline.opsPerSec;
  const verdict =
    target === undefined
      ? ""
      : ratio >= target
        ? ` (target ≥ ${target}: met)`
        : ` (target ≥ ${target}: MISSED)`;
  console.log(`\n## ${title}`);
  console.log(`  ${baseline.name.padEnd(44)} ${Math.round(baseline.opsPerSec).toLocaleString("en")} ops/s`);
  console.log(`  ${subject.name.padEnd(44)} ${Math.round(subject.opsPerSec).toLocaleString("en")} ops/s`);
  console.log(`  ratio ${ratio.toFixed(2)}${verdict}`);
}

export function tempDir(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), "agentos-bench-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * The whole service on a fresh data dir (HTTP and engine on free ports), closed and removed after `run`.
 * OpenAI has a key, so agents can be created (they must name a configured provider), and a base URL
 * where nothing listens, so a benchmark that wakes one by mistake fails at once instead of calling out.
 */
export async function withService<T>(run: (service: AgentOS) => Promise<T>): Promise<T> {
  const dir = tempDir();
  const service = await createAgentOS({
    ...loadConfig({
      AGENTOS_DATA_DIR: dir.path,
      AGENTOS_API_KEY: "bench-admin-key-0123456789",
      OPENAI_API_KEY: "sk-bench-unused",
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
  });
  try {
    return await run(service);
  } finally {
    await service.close();
    dir.remove();
  }
}

/** A new realm, created as the service (for benchmarks that need one of their own). */
export async function newRealm(engine: Engine, name: string): Promise<string> {
  const realm = (await engine.trigger({
    function_id: "realm::create",
    payload: { name, owner: "bench" },
  })) as { id: string };
  return realm.id;
}

/**
 * CPU time (user + system, in milliseconds) a process has used so far, from `/proc/<pid>/stat`: how a
 * benchmark charges each gateway (each its own process) for the work of a timed window, whoever else
 * is busy on the machine. Clock ticks are 10 ms: windows of seconds keep the error small.
 */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command (which may hold spaces), from the 3rd on: utime and stime are the 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** USER_HZ: 100 on every Linux this runs on (sysconf(_SC_CLK_TCK)). */
const CLOCK_TICKS = 100;

/** Microseconds of a process's CPU per request over a load window (`cpuMs` its processCpuMs delta). */
export const cpuPerRequestUs = (cpuMs: number, requests: number) =>
  requests > 0 ? (cpuMs * 1000) / requests : Number.NaN;

export interface PostLoad {
  rps: number;
  p50: number;
  p99: number;
  /** Microseconds of the measured process's CPU per request (NaN when no pid is given). */
  cpuUs: number;
}

/**
 * POSTs `body` as JSON to `url` over `connections` connections for `seconds` (autocannon, one worker);
 * any non-2xx answer or error fails the run. With `pid`, that process is charged its CPU per request.
 */
export async function postLoad(options: {
  url: string;
  body: unknown;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  pid?: number;
}): Promise<PostLoad> {
  const { url, pid } = options;
  const cpuBefore = pid === undefined ? 0 : processCpuMs(pid);
  const result = await autocannon({
    url,
    method: "POST",
    connections: options.connections,
    duration: options.seconds,
    headers: { "content-type": "application/json", ...options.headers },
    body: JSON.stringify(options.body),
    workers: 1,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const cpuUs =
    pid === undefined ? Number.NaN : cpuPerRequestUs(processCpuMs(pid) - cpuBefore, result.requests.total);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuUs };
}
