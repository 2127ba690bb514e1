import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { type IIIClient, registerWorker } from "iii-sdk";
import { makeDataDir, removeDir, type ServeProcess, startServe } from "../test/helpers/process.ts";
import { compare, median, report, withService } from "./util.ts";
import { mastraRuns, PEER_TARGET, type PeerRuns } from "./workflow-peers.ts";

const STEPS = 200;
const WIDTH = 50;

/**
 * Over HTTP against the service as its own process: the fixed cost of a run and the cost of a step
 * (built-in and through an iii-sdk worker), then the Mastra baseline in process (workflow-peers.ts).
 * In process: a 200-step sequential workflow of no-op functions (every step checkpointed to SQLite) vs
 * 200 direct engine.trigger calls of the same function; and a 50-wide fanout batch.
 */
export async function benchWorkflow(): Promise<void> {
  await benchWorkflowHttp();
  await withService(async ({ engine }) => {
    engine.worker("bench").registerFunction({ id: "bench::noop" }, async () => "ok");
    const steps = Array.from({ length: STEPS }, (_, i) => ({ name: `s${i}`, functionId: "bench::noop" }));
    await engine.trigger({ function_id: "workflow::create", payload: { id: "seq", name: "seq", steps } });
    const fanout = Array.from({ length: WIDTH }, (_, i) => ({
      name: `f${i}`,
      functionId: "bench::noop",
      mode: "fanout",
    }));
    await engine.trigger({
      function_id: "workflow::create",
      payload: { id: "fan", name: "fan", steps: fanout },
    });
    const direct = async () => {
      let input: unknown = null;
      for (let i = 0; i < STEPS; i++)
        input = await engine.trigger({ function_id: "bench::noop", payload: { input } });
    };
    const { baseline, subject } = await compare(
      { name: `${STEPS} direct engine.trigger calls`, op: direct },
      {
        name: `${STEPS}-step sequential workflow run`,
        op: () => engine.trigger({ function_id: "workflow::run", payload: { workflowId: "seq" } }),
      },
      5,
      1500,
    );
    report(
      `Workflow: ${STEPS} sequential steps vs ${STEPS} direct calls (checkpointing included)`,
      subject,
      baseline,
    );
    console.log(
      `  per step: ${((1e6 / subject.opsPerSec - 1e6 / baseline.opsPerSec) / STEPS).toFixed(1)} µs added (${(1e6 / subject.opsPerSec / STEPS).toFixed(1)} µs in all)`,
    );
    const fan = await compare(
      {
        name: `${WIDTH} parallel direct calls`,
        op: () =>
          Promise.all(Array.from({ length: WIDTH }, () => engine.trigger({ function_id: "bench::noop" }))),
      },
      {
        name: `${WIDTH}-wide fanout workflow run`,
        op: () => engine.trigger({ function_id: "workflow::run", payload: { workflowId: "fan" } }),
      },
      5,
      1500,
    );
    report(
      `Workflow: one ${WIDTH}-wide fanout batch vs ${WIDTH} parallel direct calls`,
      fan.subject,
      fan.baseline,
    );
  });
}

const API_KEY = "bench-admin-key-0123456789";
const LONG = 50;
const ROUNDS = 7;
const ROUND_MS = 1000;
/** Service CPU of a run's fixed cost beyond the HTTP request (create, checkpoint, completion, answer). */
const FIXED_CPU_TARGET_US = 250;
/** A step through an iii-sdk worker costs at most this many built-in steps. */
const III_STEP_TARGET = 2;

/** One HTTP client with kept-alive connections, as a real caller would use. */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function send(port: number, method: string, path: string, body?: unknown): Promise<unknown> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent,
        headers: {
          authorization: `Bearer ${API_KEY}`,
          ...(payload
            ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }
            : {}),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          if ((res.statusCode ?? 500) >= 300)
            reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`));
          else resolve(text ? JSON.parse(text) : null);
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** utime + stime of a process, in µs (Linux /proc; clock ticks of 10 ms, so rounds must be long). */
function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 and 15 of the file, counted from after the command name (field 3 is index 0).
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

interface Case {
  name: string;
  op: () => Promise<unknown>;
}

interface CaseResult {
  name: string;
  /** Median wall time of one operation over the rounds, µs. */
  wallUs: number;
  /** Service CPU per operation over all rounds, µs. */
  cpuUs: number;
}

/** Alternating rounds of every case after a warm-up, so drift hits all alike. */
async function measure(pid: number, cases: Case[]): Promise<CaseResult[]> {
  const walls = cases.map(() => [] as number[]);
  const cpu = cases.map(() => ({ us: 0, ops: 0 }));
  for (let round = -1; round < ROUNDS; round++) {
    for (const [index, item] of cases.entries()) {
      let ops = 0;
      const cpuStart = cpuMicros(pid);
      const start = performance.now();
      while (performance.now() - start < (round < 0 ? ROUND_MS / 2 : ROUND_MS)) {
        await item.op();
        ops++;
      }
      const elapsed = performance.now() - start;
      if (round < 0) continue;
      walls[index]?.push((elapsed * 1000) / ops);
      const totals = cpu[index] as { us: number; ops: number };
      totals.us += cpuMicros(pid) - cpuStart;
      totals.ops += ops;
    }
  }
  return cases.map((item, index) => ({
    name: item.name,
    wallUs: median(walls[index] as number[]),
    cpuUs: (cpu[index]?.us ?? 0) / (cpu[index]?.ops ?? 1),
  }));
}

/** Fixed cost and per-step cost from runs of 1 and LONG steps: t(n) = fixed + n × step. */
function solve(one: CaseResult, long: CaseResult) {
  const stepWall = (long.wallUs - one.wallUs) / (LONG - 1);
  const stepCpu = (long.cpuUs - one.cpuUs) / (LONG - 1);
  return { stepWall, stepCpu, fixedWall: one.wallUs - stepWall, fixedCpu: one.cpuUs - stepCpu };
}

const us = (value: number) => `${value.toFixed(0).padStart(6)} µs`;

/**
 * The service as its own process (`agentos serve`, SQLite): POST /api/workflows/run of a 1-step and a
 * 50-step sequential workflow of no-op steps, synchronous (the answer is the finished run), at one
 * connection. The two equations t(n) = fixed + n × step give the fixed cost of a run and the cost of a
 * step, in wall time and in the service process's own CPU (/proc/<pid>/stat). The HTTP request alone is
 * GET /api/health (one no-op function through the same front door). Built-in steps call api::health;
 * iii steps call a no-op of an iii-sdk worker in this process.
 */
async function benchWorkflowHttp(): Promise<void> {
  const dataDir = makeDataDir();
  let service: ServeProcess | undefined;
  let worker: IIIClient | undefined;
  let peer: PeerRuns | null = null;
  const debug = console.debug;
  console.debug = () => {};
  try {
    service = await startServe({
      dataDir,
      env: { AGENTOS_API_KEY: API_KEY, AGENTOS_RATE_LIMITS: "off", AGENTOS_LOG_LEVEL: "warn" },
    });
    const { port } = service;
    const pid = service.child.pid as number;
    worker = registerWorker(`ws://127.0.0.1:${service.enginePort}`, {
      workerName: "bench",
      otel: { enabled: false },
      enableMetricsReporting: false,
    });
    worker.registerFunction("bench::noop", async () => "ok");
    const define = (id: string, n: number, functionId: string) =>
      send(port, "POST", "/api/workflows", {
        id,
        name: id,
        steps: Array.from({ length: n }, (_, i) => ({ name: `s${i}`, functionId })),
      });
    await define("one", 1, "api::health");
    await define("long", LONG, "api::health");
    await define("one-iii", 1, "bench::noop");
    await define("long-iii", LONG, "bench::noop");
    const run = (workflowId: string) => () => send(port, "POST", "/api/workflows/run", { workflowId });
    // The worker's function may still be registering.
    for (let attempt = 0; ; attempt++) {
      try {
        await run("one-iii")();
        break;
      } catch (error) {
        if (attempt > 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    console.log(
      `\n## Workflow over HTTP: POST /api/workflows/run, 1 vs ${LONG} no-op steps (service process, SQLite, 1 connection, median of ${ROUNDS} × ${ROUND_MS} ms), and Mastra in process`,
    );
    peer = await mastraRuns(LONG);
    // Mastra's runs alternate with ours in the same rounds, so load on the machine hits both alike.
    const peerCases: Case[] = peer
      ? [
          { name: "Mastra run of 1 step, in process", op: peer.one },
          { name: `Mastra run of ${LONG} steps, in process`, op: peer.long },
        ]
      : [];
    const [health, one, long, oneIii, longIii, mastraOne, mastraLong] = (await measure(pid, [
      { name: "GET /api/health (the HTTP request alone)", op: () => send(port, "GET", "/api/health") },
      { name: "run of 1 built-in step", op: run("one") },
      { name: `run of ${LONG} built-in steps`, op: run("long") },
      { name: "run of 1 iii-sdk worker step", op: run("one-iii") },
      { name: `run of ${LONG} iii-sdk worker steps`, op: run("long-iii") },
      ...peerCases,
    ])) as [CaseResult, CaseResult, CaseResult, CaseResult, CaseResult, CaseResult?, CaseResult?];
    console.log(`  ${"".padEnd(44)} ${"wall".padStart(9)} ${"service CPU".padStart(12)}`);
    for (const item of [health, one, long, oneIii, longIii]) {
      console.log(`  ${item.name.padEnd(44)} ${us(item.wallUs)} ${us(item.cpuUs)}`);
    }
    for (const item of [mastraOne, mastraLong]) {
      if (item) console.log(`  ${item.name.padEnd(44)} ${us(item.wallUs)}`);
    }
    const builtIn = solve(one, long);
    const iii = solve(oneIii, longIii);
    const fixedCpu = builtIn.fixedCpu - health.cpuUs;
    console.log(
      `  fixed cost of a run: ${builtIn.fixedWall.toFixed(0)} µs wall (${(builtIn.fixedWall - health.wallUs).toFixed(0)} beyond the HTTP request), ${builtIn.fixedCpu.toFixed(0)} µs service CPU`,
    );
    console.log(
      `  service CPU of the fixed cost beyond the HTTP request: ${fixedCpu.toFixed(0)} µs (target ≤ ${FIXED_CPU_TARGET_US}: ${fixedCpu <= FIXED_CPU_TARGET_US ? "met" : "MISSED"})`,
    );
    console.log(
      `  per built-in step: ${builtIn.stepWall.toFixed(1)} µs wall, ${builtIn.stepCpu.toFixed(1)} µs service CPU`,
    );
    const ratio = iii.stepWall / builtIn.stepWall;
    console.log(
      `  per iii-sdk worker step: ${iii.stepWall.toFixed(1)} µs wall, ${iii.stepCpu.toFixed(1)} µs service CPU: ${ratio.toFixed(2)}× a built-in step (target ≤ ${III_STEP_TARGET}: ${ratio <= III_STEP_TARGET ? "met" : "MISSED"})`,
    );
    if (mastraOne && mastraLong) {
      const step = (mastraLong.wallUs - mastraOne.wallUs) / (LONG - 1);
      console.log(
        `  Mastra: fixed cost ${(mastraOne.wallUs - step).toFixed(0)} µs, per step ${step.toFixed(1)} µs`,
      );
      const peerRatio = mastraOne.wallUs / one.wallUs;
      console.log(
        `  our 1-step run over HTTP ${one.wallUs.toFixed(0)} µs vs Mastra's 1-step run in process ${mastraOne.wallUs.toFixed(0)} µs: ratio ${peerRatio.toFixed(2)} (target ≥ ${PEER_TARGET}: ${peerRatio >= PEER_TARGET ? "met" : "MISSED"})`,
      );
    } else {
      console.log("  no Mastra baseline here (see above): our own fixed and per-step costs stand alone");
    }
  } finally {
    peer?.close();
    await worker?.shutdown().catch(() => undefined);
    await service?.stop("SIGTERM").catch(() => undefined);
    agent.destroy();
    removeDir(dataDir);
    console.debug = debug;
  }
}
