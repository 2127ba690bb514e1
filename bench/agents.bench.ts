import autocannon from "autocannon";
import { createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import { startFakeOpenAI } from "../test/helpers/fake-openai.ts";
import { median, tempDir } from "./util.ts";

const ROUND_S = 3;
const ROUNDS = 3;

interface Load {
  rps: number;
  p50: number;
  p99: number;
}

async function load(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  connections: number,
): Promise<Load> {
  const result = await autocannon({
    url,
    method: "POST",
    connections,
    duration: ROUND_S,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    workers: 1,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

/**
 * POST /api/agents/:id/message (a new session each time: session and message writes, memory recall,
 * tool definitions, the model call, cost event) vs the same request straight to the instant fake model.
 */
export async function benchAgents(): Promise<void> {
  const fake = await startFakeOpenAI();
  const dir = tempDir();
  const apiKey = "bench-admin-key-0123456789";
  const config = {
    ...loadConfig({
      AGENTOS_DATA_DIR: dir.path,
      AGENTOS_API_KEY: apiKey,
      OPENAI_API_KEY: "sk-bench",
      OPENAI_BASE_URL: fake.baseUrl,
    }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
    rateLimits: false as const,
  };
  const service = await createAgentOS(config);
  const url = await service.listen();
  const auth = { authorization: `Bearer ${apiKey}` };
  try {
    const created = await fetch(`${url}/api/agents`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "bench", model: "gpt-4o" }),
    });
    const { id } = (await created.json()) as { id: string };
    for (const connections of [1, 32]) {
      const direct = () =>
        load(
          `${fake.baseUrl}/chat/completions`,
          { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
          {},
          connections,
        );
      const agent = () => load(`${url}/api/agents/${id}/message`, { message: "hi" }, auth, connections);
      await direct();
      await agent();
      const base: Load[] = [];
      const sub: Load[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        base.push(await direct());
        sub.push(await agent());
      }
      const pick = (runs: Load[], key: keyof Load) => median(runs.map((run) => run[key])) as number;
      const ratio = pick(sub, "rps") / pick(base, "rps");
      console.log(
        `\n## Agents: POST /api/agents/:id/message vs the fake model directly (${connections} connections, median of ${ROUNDS} × ${ROUND_S} s)`,
      );
      console.log(
        `  fake model directly        ${Math.round(pick(base, "rps")).toLocaleString("en")} req/s, p50 ${pick(base, "p50")} ms, p99 ${pick(base, "p99")} ms`,
      );
      console.log(
        `  agent message              ${Math.round(pick(sub, "rps")).toLocaleString("en")} req/s, p50 ${pick(sub, "p50")} ms, p99 ${pick(sub, "p99")} ms`,
      );
      console.log(
        `  added latency p50 ${(pick(sub, "p50") - pick(base, "p50")).toFixed(1)} ms, p99 ${(pick(sub, "p99") - pick(base, "p99")).toFixed(1)} ms`,
      );
      console.log(`  ratio ${ratio.toFixed(2)} (target ≥ 0.5: ${ratio >= 0.5 ? "met" : "MISSED"})`);
    }
  } finally {
    await service.close();
    await fake.close();
    dir.remove();
  }
}
