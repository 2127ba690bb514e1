import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "pg";
import { afterAll, beforeAll, expect } from "vitest";
import type { Config } from "../../../src/config/env.ts";
import { findTestPostgres, uniqueSchema } from "../../engine/state/contract.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { type JsonBody, json, startTestServer, type TestServer } from "../../helpers/server.ts";

/**
 * The embeddings integration tests' world: a fake OpenAI whose `/v1/embeddings` answers the hashed
 * bag-of-words vectors (and can be taken down), and a real service on SQLite or on PostgreSQL (skipped,
 * with the reason printed, when none is reachable) that can be stopped and started again on its data.
 */
export interface Backend {
  name: string;
  /** Storage for one test: `start` opens a service on it (again after a stop), `drop` removes it. */
  storage(): Promise<{
    start(env: Record<string, string>, config?: Partial<Config>): Promise<TestServer>;
    drop(): Promise<void>;
  }>;
}

const postgres = await findTestPostgres();
if (postgres.url === null) console.warn(`memory embeddings: skipping PostgreSQL: ${postgres.reason}`);

const sqlite: Backend = {
  name: "SQLite",
  async storage() {
    const dataDir = mkdtempSync(join(tmpdir(), "agentos-embeddings-"));
    return {
      start: (env, config) => startTestServer({ env, ...config }, { dataDir }),
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  },
};

const cluster = (url: string): Backend => ({
  name: "PostgreSQL",
  async storage() {
    const schema = uniqueSchema();
    const admin = new Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.end();
    const scoped = `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    return {
      start: (env, config) =>
        startTestServer({ env, databaseUrl: scoped, vaultKey: "cd".repeat(32), ...config }),
      async drop() {
        const client = new Client({ connectionString: url });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      },
    };
  },
});

export const backends: Backend[] = postgres.url ? [sqlite, cluster(postgres.url)] : [sqlite];

/** The provider variables pointing OpenAI at the fake. */
export const fakeEnv = (fake: FakeOpenAI): Record<string, string> => ({
  OPENAI_API_KEY: "sk-test",
  OPENAI_BASE_URL: fake.baseUrl,
});

export const startFake = () => startFakeOpenAI({ embeddings: "words" });

/**
 * A fake OpenAI and a service on `backend` for the describe block it is called in (started before its
 * tests, stopped and dropped after them).
 */
export function serviceOn(backend: Backend): { fake: () => FakeOpenAI; server: () => TestServer } {
  let fake: FakeOpenAI | undefined;
  let storage: Awaited<ReturnType<Backend["storage"]>> | undefined;
  let server: TestServer | undefined;
  beforeAll(async () => {
    fake = await startFake();
    storage = await backend.storage();
    server = await storage.start(fakeEnv(fake));
  });
  afterAll(async () => {
    await server?.close();
    await storage?.drop();
    await fake?.close();
  });
  const started = <T>(value: T | undefined) => {
    if (value === undefined) throw new Error("the service is not started yet");
    return value;
  };
  return { fake: () => started(fake), server: () => started(server) };
}

export async function send(server: TestServer, method: string, path: string, body?: unknown) {
  const response = await server.request(path, { method, ...(body === undefined ? {} : { json: body }) });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as JsonBody };
}

/** A new agent on the fake chat model with `embeddingModel` (or none). */
export async function newAgent(server: TestServer, embeddingModel?: string): Promise<string> {
  const created = await send(server, "POST", "/api/agents", {
    name: `mem-${Math.random().toString(36).slice(2, 10)}`,
    model: "gpt-4o",
    ...(embeddingModel ? { embeddingModel } : {}),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

/** Memories stored as the service's own code stores them (memory::store_many, as the system). */
export async function remember(server: TestServer, agentId: string, contents: string[]): Promise<void> {
  await server.service.engine.trigger({
    function_id: "memory::store_many",
    payload: { agentId, entries: contents.map((content) => ({ content })) },
  });
}

export const status = async (server: TestServer, agentId: string) =>
  (await send(server, "GET", `/api/agents/${agentId}/memory/embeddings`)).body;

export async function recall(server: TestServer, agentId: string, query: string, mode?: string) {
  const answer = await send(server, "POST", `/api/agents/${agentId}/memory`, {
    query,
    ...(mode ? { mode } : {}),
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.results as Array<{ content: string; matchedBy: string[]; score: number }>;
}

/** Polls `check` until it holds or `ms` pass (then fails with the last value seen). */
export async function eventually<T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T = await read();
  while (!check(last)) {
    if (Date.now() > deadline) throw new Error(`still not there after ${ms} ms: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await read();
  }
  return last;
}

/** Every embeddings request the fake received whose inputs include `text`. */
export function embeddingRequests(fake: FakeOpenAI, text?: string) {
  return fake.requests
    .map((request) => request.embeddings as { model: string; input: string | string[] } | undefined)
    .filter((body): body is { model: string; input: string | string[] } => body !== undefined)
    .filter((body) => text === undefined || [body.input].flat().includes(text));
}

/** A counter's value in /metrics (0 when absent). */
export async function metric(server: TestServer, line: string): Promise<number> {
  const text = await (await server.request("/metrics")).text();
  const found = text.split("\n").find((row) => row.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

export { json };

/** How many memory entries the agent holds, as the text index counts them. */
export const storedEntries = async (server: TestServer, agentId: string) =>
  (
    (await server.service.engine.trigger({
      function_id: "search::count",
      payload: { index: "memory", scope: agentId },
    })) as { count: number }
  ).count;
