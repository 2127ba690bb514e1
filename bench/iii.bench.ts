import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
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
  const { port } = server.address() as AddressInfo;
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
      await new Promise<void>((resolve) => server.close(() => resolve()));
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

/** The subject: the engine's iii server with a real iii-sdk worker providing the no-op function. */
async function startIii(): Promise<Target> {
  const engine = createEngine({ bus: new LocalBus() });
  const server = new IiiServer(engine, { host: "127.0.0.1", port: 0, logger: silentLogger() });
  const url = await server.listen();
  const worker = registerWorker(url, {
    workerName: "bench",
    otel: { enabled: false },
    enableMetricsReporting: false,
  });
  const close = async () => {
    await worker.shutdown();
    await server.close();
    engine.shutdown();
  };
  worker.registerFunction(FUNCTION_ID, async (data: unknown) => data);
  try {
    await waitFor(() => engine.functions.get(FUNCTION_ID) !== undefined, `${FUNCTION_ID} to register`);
  } catch (error) {
    await close();
    throw error;
  }
  return { call: () => engine.trigger({ function_id: FUNCTION_ID, payload }), close };
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

/**
 * engine.trigger of a no-op function on a remote iii-sdk worker (engine → WebSocket → worker → engine)
 * vs a raw ws echo round trip with frames of the same shape, at concurrency 1 and 64.
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
      console.log(
        `  latency p50 / p99: raw ws echo ${micros(baseline.p50)} / ${micros(baseline.p99)} µs, engine.trigger ${micros(subject.p50)} / ${micros(subject.p99)} µs`,
      );
    }
  } finally {
    for (const target of started.reverse()) await target.close();
    console.debug = debug;
  }
}
