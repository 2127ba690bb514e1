import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startFakeOpenAI } from "../test/helpers/fake-openai.ts";
import { freePort, makeDataDir, NODE, removeDir, startServe } from "../test/helpers/process.ts";
import { median, type PostLoad, postLoad } from "./util.ts";

/**
 * `npm run bench gateway` (issue #14): `POST /v1/chat/completions` with a plain catalog model through
 * this service and through the Portkey AI Gateway (npm `@portkey-ai/gateway`, a Node OpenAI-compatible
 * gateway), both as their own processes in front of the same instant fake model on loopback; 3
 * alternating rounds of 4 s at 1 and at 32 connections. Each gateway is charged the CPU time its own
 * process used during its rounds (`/proc/<pid>/stat`), per request, so the comparison holds on a busy
 * machine too. Targets (issue #34): throughput at least 1.5 × Portkey's at 1 connection and 2 × at 32,
 * and at most 60 % of Portkey's CPU per completion at both.
 */
const ROUND_S = 4;
const ROUNDS = 3;
const TARGET: Record<number, number> = { 1: 1.5, 32: 2 };
const TARGET_CPU_SHARE = 0.6;
const KEY = "bench-gateway-admin-key-0123456789";
const PORTKEY = fileURLToPath(
  new URL("../node_modules/@portkey-ai/gateway/build/start-server.js", import.meta.url),
);
const BODY = { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] };

/** One timed round of completions (see postLoad), charged to the gateway process `pid` when given. */
const load = (url: string, headers: Record<string, string>, connections: number, pid?: number) =>
  postLoad({ url, body: BODY, headers, connections, seconds: ROUND_S, pid });

async function startPortkey(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(NODE, [PORTKEY, `--port=${port}`, "--headless"], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 100; tries++) {
    const up = await fetch(url).then(
      () => true,
      () => false,
    );
    if (up) return { url, child };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill("SIGKILL");
  throw new Error("the Portkey gateway did not start");
}

export async function benchGateway(): Promise<void> {
  const fake = await startFakeOpenAI();
  const dataDir = makeDataDir();
  const portkey = await startPortkey();
  const ours = await startServe({
    dataDir,
    env: {
      AGENTOS_API_KEY: KEY,
      AGENTOS_RATE_LIMITS: "off",
      AGENTOS_LOG_LEVEL: "warn",
      OPENAI_API_KEY: "sk-bench",
      OPENAI_BASE_URL: fake.baseUrl,
    },
  });
  try {
    const direct = (connections: number) => load(`${fake.baseUrl}/chat/completions`, {}, connections);
    const viaPortkey = (connections: number) =>
      load(
        `${portkey.url}/v1/chat/completions`,
        {
          authorization: "Bearer sk-bench",
          "x-portkey-provider": "openai",
          "x-portkey-custom-host": fake.baseUrl,
        },
        connections,
        portkey.child.pid,
      );
    const viaUs = (connections: number) =>
      load(
        `${ours.url}/v1/chat/completions`,
        { authorization: `Bearer ${KEY}` },
        connections,
        ours.child.pid,
      );
    for (const connections of [1, 32]) {
      // Warm-up, then alternating rounds so drift hits all three alike.
      await viaPortkey(connections);
      await viaUs(connections);
      const runs = { direct: [] as PostLoad[], portkey: [] as PostLoad[], ours: [] as PostLoad[] };
      for (let round = 0; round < ROUNDS; round++) {
        runs.direct.push(await direct(connections));
        runs.portkey.push(await viaPortkey(connections));
        runs.ours.push(await viaUs(connections));
      }
      const rps = (list: PostLoad[]) => median(list.map((run) => run.rps)) as number;
      const p50 = (list: PostLoad[]) => median(list.map((run) => run.p50)) as number;
      const cpu = (list: PostLoad[]) => median(list.map((run) => run.cpuUs)) as number;
      const ratio = rps(runs.ours) / rps(runs.portkey);
      const cpuShare = cpu(runs.ours) / cpu(runs.portkey);
      const target = TARGET[connections] as number;
      console.log(
        `\n## Gateway: POST /v1/chat/completions, plain model, ${connections} connection${connections === 1 ? "" : "s"} (median of ${ROUNDS} × ${ROUND_S} s)`,
      );
      console.log(
        `  fake model directly   ${Math.round(rps(runs.direct)).toLocaleString("en")} req/s, p50 ${p50(runs.direct)} ms`,
      );
      for (const [name, list] of [
        ["Portkey gateway", runs.portkey],
        ["AgentOS", runs.ours],
      ] as const) {
        console.log(
          `  ${name.padEnd(20)}  ${Math.round(rps(list)).toLocaleString("en")} req/s, added p50 ${(p50(list) - p50(runs.direct)).toFixed(1)} ms, CPU ${Math.round(cpu(list))} µs/request (rounds ${list.map((run) => Math.round(run.cpuUs)).join(", ")})`,
        );
      }
      console.log(
        `  ratio AgentOS / Portkey ${ratio.toFixed(2)} (target ≥ ${target}: ${ratio >= target ? "met" : "MISSED"})`,
      );
      console.log(
        `  CPU per request AgentOS / Portkey ${cpuShare.toFixed(2)} (target ≤ ${TARGET_CPU_SHARE}: ${cpuShare <= TARGET_CPU_SHARE ? "met" : "MISSED"})`,
      );
    }
  } finally {
    await ours.stop("SIGTERM").catch(() => undefined);
    portkey.child.kill("SIGTERM");
    await fake.close();
    removeDir(dataDir);
  }
}
