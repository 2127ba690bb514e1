import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { registerWorker } from "iii-sdk";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import { IiiServer } from "../src/engine/iii/server.ts";
import { createEngine } from "../src/engine/index.ts";
import { LocalBus } from "../src/engine/trigger-types/subscribe.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { type ConcurrentRound, median, percentile, report, runConcurrent } from "./util.ts";

const ROUNDS = 5;
const ROUND_MS = 500;
const CONCURRENCIES = [1, 64];
const TARGET = 0.5;
const FUNCTION_ID = "bench::noop";
const payload = { n: 1 };

/** A round-trip operation and how to tear down what it talks to. */
interface Target {
  call(): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * The baseline: a ws server in this process that echoes each invokefunction frame as an
 * invocationresult. Like the engine and the SDK, each side parses and stringifies once per direction,
 * and replies are matched to calls by id, so concurrent calls work the same way on both sides.
 */
async function startEcho(): Promise<Target> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  await new Promise<void>((resolve) => server.once("listening", resolve));
  server.on("connection", (socket) => {
    socket.on("message", (data: RawData) => {
      const frame = JSON.parse(data.toString());
      const { invocation_id, function_id, data: result } = frame;
      socket.send(JSON.stringify({ type: "invocationresult", invocation_id, function_id, result }));
    });
  });
  const client = await echoClient((server.address() as AddressInfo).port);
  return {
    call: client.call,
    close: async () => {
      await client.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The calling side of the echo: ids matched to replies, as the engine matches its calls. */
async function echoClient(port: number): Promise<Target> {
  // Default client options, as the SDK's client uses.
  const client = new WebSocket(`ws://127.0.0.1:${port}`);
  await new Promise<void>((resolve, reject) => client.once("open", resolve).once("error", reject));
  const pending = new Map<string, (result: unknown) => void>();
  client.on("message", (data: RawData) => {
    const frame = JSON.parse(data.toString());
    pending.get(frame.invocation_id)?.(frame.result);
    pending.delete(frame.invocation_id);
  });
  return {
    call: () =>
      new Promise((resolve) => {
        const invocation_id = randomUUID();
        pending.set(invocation_id, resolve);
        client.send(
          JSON.stringify({ type: "invokefunction", invocation_id, function_id: FUNCTION_ID, data: payload }),
        );
      }),
    close: async () => {
      client.terminate();
    },
  };
}

/** Polls every 10 ms until `ready` holds; gives up after `ms` so a broken setup fails instead of hanging. */
async function waitFor(ready: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!ready()) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * The subject: the engine's iii server with a real iii-sdk worker providing the no-op function, in this
 * process or (`remote`) in a process of its own.
 */
async function startIii(remote = false): Promise<Target> {
  const engine = createEngine({ bus: new LocalBus() });
  const server = new IiiServer(engine, { host: "127.0.0.1", port: 0, logger: silentLogger() });
  const url = await server.listen();
  const stopWorker = remote ? remoteWorker(url) : localWorker(url);
  const close = async () => {
    await stopWorker();
    await server.close();
    engine.shutdown();
  };
  try {
    // A worker process of its own first starts Node and loads the SDK.
    const ms = remote ? 30_000 : 5000;
    await waitFor(() => engine.functions.get(FUNCTION_ID) !== undefined, `${FUNCTION_ID} to register`, ms);
  } catch (error) {
    await close();
    throw error;
  }
  return { call: () => engine.trigger({ function_id: FUNCTION_ID, payload }), close };
}

function localWorker(url: string): () => Promise<void> {
  const worker = registerWorker(url, {
    workerName: "bench",
    otel: { enabled: false },
    enableMetricsReporting: false,
  });
  worker.registerFunction(FUNCTION_ID, async (data: unknown) => data);
  return () => worker.shutdown();
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The far ends in processes of their own, as remote workers run (started from the repository root). */
const REMOTE_WORKER = `
import { registerWorker } from "iii-sdk";
console.debug = () => {};
const worker = registerWorker(process.env.III_URL, { workerName: "bench", otel: { enabled: false }, enableMetricsReporting: false });
worker.registerFunction("${FUNCTION_ID}", async (data) => data);
process.on("disconnect", () => void worker.shutdown().then(() => process.exit(0)));
`;
const REMOTE_ECHO = `
import { WebSocketServer } from "ws";
const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
server.on("listening", () => process.send(server.address().port));
server.on("connection", (socket) => socket.on("message", (data) => {
  const { invocation_id, function_id, data: result } = JSON.parse(data.toString());
  socket.send(JSON.stringify({ type: "invocationresult", invocation_id, function_id, result }));
}));
process.on("disconnect", () => process.exit(0));
`;

function spawnModule(code: string, env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, ["--input-type=module", "-e", code], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
}

/** Ends a child by closing its IPC channel (it exits on disconnect), killing it if it lingers. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.disconnect();
  const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
  await exited;
  clearTimeout(timer);
}

function remoteWorker(url: string): () => Promise<void> {
  const child = spawnModule(REMOTE_WORKER, { III_URL: url });
  return () => stopChild(child);
}

async function startRemoteEcho(): Promise<Target> {
  const child = spawnModule(REMOTE_ECHO);
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (message) => resolve(message as number));
    child.once("exit", () => reject(new Error("the echo process exited before listening")));
  });
  const client = await echoClient(port);
  return {
    call: client.call,
    close: async () => {
      await client.close();
      await stopChild(child);
    },
  };
}

interface Summary {
  opsPerSec: number;
  p50: number;
  p99: number;
}

/** Median throughput of the rounds; latency percentiles over every call of every round. */
function summarize(rounds: ConcurrentRound[]): Summary {
  const latencies = rounds.flatMap((round) => round.latencies).sort((a, b) => a - b);
  return {
    opsPerSec: median(rounds.map((round) => round.opsPerSec)),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

/** Warms both up, then alternates rounds so drift on a noisy machine hits both alike. */
async function compareAt(concurrency: number, baseline: Target, subject: Target) {
  await runConcurrent(baseline.call, concurrency, ROUND_MS);
  await runConcurrent(subject.call, concurrency, ROUND_MS);
  const base: ConcurrentRound[] = [];
  const sub: ConcurrentRound[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    base.push(await runConcurrent(baseline.call, concurrency, ROUND_MS));
    sub.push(await runConcurrent(subject.call, concurrency, ROUND_MS));
  }
  return { baseline: summarize(base), subject: summarize(sub) };
}

const micros = (ms: number) => Math.round(ms * 1000).toLocaleString("en");

function printLatencies(baseline: Summary, subject: Summary): void {
  console.log(
    `  latency p50 / p99: raw ws echo ${micros(baseline.p50)} / ${micros(baseline.p99)} µs, engine.trigger ${micros(subject.p50)} / ${micros(subject.p99)} µs`,
  );
}

/**
 * engine.trigger of a no-op function on a remote iii-sdk worker (engine → WebSocket → worker → engine)
 * vs a raw ws echo round trip with frames of the same shape, at concurrency 1 and 64; then both at
 * concurrency 1 with the far end in a process of its own (what a workflow step through a worker pays).
 */
export async function benchIii(): Promise<void> {
  // The SDK logs its worker id (and any reconnect) with console.debug: noise in a report.
  const debug = console.debug;
  console.debug = () => {};
  const started: Target[] = [];
  try {
    const echo = await startEcho();
    started.push(echo);
    const iii = await startIii();
    started.push(iii);
    for (const concurrency of CONCURRENCIES) {
      const { baseline, subject } = await compareAt(concurrency, echo, iii);
      report(
        `iii: remote no-op round trip vs raw ws echo (concurrency ${concurrency}, median of ${ROUNDS} × ${ROUND_MS} ms)`,
        { name: "engine.trigger → iii-sdk worker no-op", opsPerSec: subject.opsPerSec },
        { name: "raw ws echo, same frame shape", opsPerSec: baseline.opsPerSec },
        TARGET,
      );
      printLatencies(baseline, subject);
    }
    // A workflow's remote step calls a worker in another process: each way wakes the other process.
    const remoteEcho = await startRemoteEcho();
    started.push(remoteEcho);
    const remoteIii = await startIii(true);
    started.push(remoteIii);
    const { baseline, subject } = await compareAt(1, remoteEcho, remoteIii);
    report(
      `iii: the same with the far end in a process of its own (concurrency 1, median of ${ROUNDS} × ${ROUND_MS} ms)`,
      { name: "engine.trigger → iii-sdk worker process", opsPerSec: subject.opsPerSec },
      { name: "raw ws echo across processes", opsPerSec: baseline.opsPerSec },
    );
    printLatencies(baseline, subject);
  } finally {
    for (const target of started.reverse()) await target.close();
    console.debug = debug;
  }
}
