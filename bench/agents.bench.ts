import { type AgentOS, createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import { startFakeOpenAI } from "../test/helpers/fake-openai.ts";
import { makeDataDir, removeDir, type ServeProcess, startServe } from "../test/helpers/process.ts";
import { median, type PostLoad, postLoad } from "./util.ts";

const ROUND_S = 3;
const ROUNDS = 3;

/** One timed round of POSTs (see postLoad), charged to the service process `pid` when given. */
const load = (
  url: string,
  body: unknown,
  headers: Record<string, string>,
  connections: number,
  pid?: number,
) => postLoad({ url, body, headers, connections, seconds: ROUND_S, pid });

/**
 * Targets of the agent turn (issues #14 and #34), against the instant fake model on the 2-core build
 * machine. The service's CPU per message is its own process's (`/proc/<pid>/stat`) over the timed rounds.
 */
const TARGET_RPS_32 = 1000;
const TARGET_ADDED_P50_1 = 1;
const TARGET_P99_32 = 50;
const TARGET_CPU_US_32 = 600;
const MEMORY_ENTRIES = 100_000;

/** Fills an agent's memory with entries that all share the bench message's words ("hi"). */
async function seedMemory(service: AgentOS, agentId: string): Promise<number> {
  const started = performance.now();
  const batch = 256;
  for (let i = 0; i < MEMORY_ENTRIES; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, MEMORY_ENTRIES - i) }, (_, j) =>
        service.engine.trigger({
          function_id: "memory::store",
          payload: {
            agentId,
            content: `hi there, note ${i + j} about the weather and the plan`,
            role: "user",
          },
        }),
      ),
    );
  }
  return (performance.now() - started) / 1000;
}

/**
 * The two agents, one with 100 000 memories, made in the data directory by a service in this process,
 * which is then closed: the measured service opens the same directory as its own process.
 */
async function prepareAgents(dataDir: string, apiKey: string): Promise<{ empty: string; full: string }> {
  const service = await createAgentOS({
    ...loadConfig({
      AGENTOS_DATA_DIR: dataDir,
      AGENTOS_API_KEY: apiKey,
      AGENTOS_LOG_LEVEL: "warn",
      OPENAI_API_KEY: "sk-bench",
    }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
  });
  try {
    const newAgent = async (name: string) =>
      (
        (await service.engine.trigger({
          function_id: "agent::create",
          payload: { name, model: "gpt-4o" },
        })) as {
          id: string;
        }
      ).id;
    const agents = { empty: await newAgent("bench-empty"), full: await newAgent("bench-full") };
    const seconds = await seedMemory(service, agents.full);
    console.log(
      `\n  seeded ${MEMORY_ENTRIES.toLocaleString("en")} memory entries in ${seconds.toFixed(1)} s`,
    );
    return agents;
  } finally {
    await service.close();
  }
}

/**
 * POST /api/agents/:id/message (a new session each time: session and message writes, memory recall,
 * tool definitions, the model call, the cost) vs the same request straight to the instant fake model, at
 * 1 and 32 connections, with an empty memory and with 100 000 entries that all contain the message's word.
 * The service runs as its own process (`agentos serve`, as deployed and as in the gateway bench); the fake
 * model and the load generator share this one, so the service's thread does only the service's work.
 */
export async function benchAgents(): Promise<void> {
  const fake = await startFakeOpenAI();
  const dataDir = makeDataDir();
  const apiKey = "bench-admin-key-0123456789";
  const auth = { authorization: `Bearer ${apiKey}` };
  let service: ServeProcess | undefined;
  try {
    const agents = await prepareAgents(dataDir, apiKey);
    service = await startServe({
      dataDir,
      env: {
        AGENTOS_API_KEY: apiKey,
        AGENTOS_RATE_LIMITS: "off",
        AGENTOS_LOG_LEVEL: "warn",
        OPENAI_API_KEY: "sk-bench",
        OPENAI_BASE_URL: fake.baseUrl,
      },
    });
    for (const [memory, id] of [
      ["empty memory", agents.empty],
      [`${MEMORY_ENTRIES.toLocaleString("en")} memory entries`, agents.full],
    ] as const) {
      for (const connections of [1, 32]) {
        await measure(service, fake.baseUrl, id, auth, connections, memory);
      }
    }
  } finally {
    await service?.stop("SIGTERM").catch(() => undefined);
    await fake.close();
    removeDir(dataDir);
  }
}

async function measure(
  service: ServeProcess,
  fakeUrl: string,
  id: string,
  auth: Record<string, string>,
  connections: number,
  memory: string,
): Promise<void> {
  const direct = () =>
    load(
      `${fakeUrl}/chat/completions`,
      { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
      {},
      connections,
    );
  const agent = () =>
    load(`${service.url}/api/agents/${id}/message`, { message: "hi" }, auth, connections, service.child.pid);
  await direct();
  await agent();
  const base: PostLoad[] = [];
  const sub: PostLoad[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    base.push(await direct());
    sub.push(await agent());
  }
  const pick = (runs: PostLoad[], key: keyof PostLoad) => median(runs.map((run) => run[key])) as number;
  const rps = pick(sub, "rps");
  const addedP50 = pick(sub, "p50") - pick(base, "p50");
  const cpuUs = pick(sub, "cpuUs");
  // At one connection a request's mean latency is 1 / throughput: finer than the percentiles' 1 ms steps.
  const addedMeanMs = 1000 / rps - 1000 / pick(base, "rps");
  console.log(
    `\n## Agents: POST /api/agents/:id/message, ${memory}, ${connections} connection${connections === 1 ? "" : "s"} (median of ${ROUNDS} × ${ROUND_S} s)`,
  );
  console.log(
    `  fake model directly        ${Math.round(pick(base, "rps")).toLocaleString("en")} req/s, p50 ${pick(base, "p50")} ms, p99 ${pick(base, "p99")} ms`,
  );
  console.log(
    `  agent message              ${Math.round(rps).toLocaleString("en")} req/s, p50 ${pick(sub, "p50")} ms, p99 ${pick(sub, "p99")} ms, service CPU ${Math.round(cpuUs)} µs/message (rounds ${sub.map((run) => Math.round(run.cpuUs)).join(", ")})`,
  );
  console.log(`  ratio ${(rps / pick(base, "rps")).toFixed(2)}; added latency p50 ${addedP50.toFixed(1)} ms`);
  if (connections === 1) {
    console.log(`  added mean latency (from throughput) ${addedMeanMs.toFixed(2)} ms`);
    const met = addedP50 <= TARGET_ADDED_P50_1 && addedMeanMs <= TARGET_ADDED_P50_1;
    console.log(`  target added p50 (and mean) ≤ ${TARGET_ADDED_P50_1} ms: ${met ? "met" : "MISSED"}`);
  } else {
    const met = rps >= TARGET_RPS_32 && pick(sub, "p99") < TARGET_P99_32;
    console.log(
      `  target ≥ ${TARGET_RPS_32} msg/s with p99 < ${TARGET_P99_32} ms: ${met ? "met" : "MISSED"}`,
    );
    const cpuMet = cpuUs <= TARGET_CPU_US_32;
    console.log(`  target service CPU ≤ ${TARGET_CPU_US_32} µs/message: ${cpuMet ? "met" : "MISSED"}`);
  }
}
