import autocannon from "autocannon";
import Fastify from "fastify";
import { createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import { report, tempDir } from "./util.ts";

const ROUND_S = 3;
const ROUNDS = 5;
const CONNECTIONS = 32;

/** One autocannon run from a worker thread, so the load generator does not share the server's event loop. */
async function load(url: string, headers: Record<string, string>, seconds: number): Promise<number> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers, workers: 1 });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  }
  return result.requests.average;
}

/** Warms both targets up, then alternates rounds so drift on a noisy machine hits both alike; medians win. */
async function compare(baseline: () => Promise<number>, subject: () => Promise<number>) {
  await baseline();
  await subject();
  const base: number[] = [];
  const sub: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    base.push(await baseline());
    sub.push(await subject());
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return { baseline: median(base), subject: median(sub) };
}

/** Headers of one real reply, minus those Node writes itself, so the baseline can send the same bytes. */
async function replyHeadersOf(url: string, headers: Record<string, string>): Promise<Record<string, string>> {
  const response = await fetch(url, { headers });
  await response.arrayBuffer();
  const skip = new Set(["date", "content-length", "connection", "keep-alive"]);
  return Object.fromEntries([...response.headers].filter(([name]) => !skip.has(name)));
}

/**
 * Authenticated GET /api/health through the full stack (rate limit, key check, engine, metrics) vs a
 * bare Fastify route in the same process. The bare route answers with the same headers and body shape:
 * autocannon parses headers in JavaScript, so unequal replies would measure the client, not the server.
 */
export async function benchHttp(): Promise<void> {
  const dir = tempDir();
  const apiKey = "bench-admin-key-0123456789";
  const config = {
    ...loadConfig({ AGENTOS_DATA_DIR: dir.path, AGENTOS_API_KEY: apiKey }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
    rateLimits: { read: 1e9, write: 1e9, message: 1e9, workflow_run: 1e9 },
  };
  const service = await createAgentOS(config);
  const url = await service.listen();
  const auth = { authorization: `Bearer ${apiKey}` };
  const sameHeaders = await replyHeadersOf(`${url}/api/health`, auth);

  const bare = Fastify();
  bare.get("/health", async (_request, reply) => {
    reply.headers(sameHeaders);
    return { status: "ok", version: "0.1.0", workers: 3, uptime: process.uptime() };
  });
  const bareUrl = await bare.listen({ port: 0, host: "127.0.0.1" });
  try {
    const { baseline, subject } = await compare(
      () => load(`${bareUrl}/health`, {}, ROUND_S),
      () => load(`${url}/api/health`, auth, ROUND_S),
    );
    report(
      `HTTP: authenticated GET /api/health vs bare Fastify (${CONNECTIONS} connections, median of ${ROUNDS} × ${ROUND_S} s)`,
      { name: "full stack GET /api/health", opsPerSec: subject },
      { name: "bare Fastify GET /health, same reply bytes", opsPerSec: baseline },
      0.65,
    );
  } finally {
    await bare.close();
    await service.close();
    dir.remove();
  }
}
