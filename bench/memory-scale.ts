import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import autocannon from "autocannon";
import { Client } from "pg";
import { type AgentOS, createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import { PostgresTextIndex } from "../src/engine/search/postgres.ts";
import { setClock } from "../src/shared/clock.ts";
import { dropSchema, findTestPostgres, uniqueSchema } from "../test/engine/state/contract.ts";
import { startFakeOpenAI } from "../test/helpers/fake-openai.ts";
import { CLI, freePort, NODE, type ServeProcess, startServe } from "../test/helpers/process.ts";
import { entryTexts, queryTexts } from "./memory-words.ts";
import { median, percentile } from "./util.ts";

/**
 * Memory at scale (issue #34 item 5): one agent with 1 000 000 memories, and a service of 10 000
 * agents. The fills are cached under CACHE_ROOT (a pristine copy per data set, reused while its marker
 * matches, copied afresh for each run since turns add memories); delete the directory to refill.
 */
export const CACHE_ROOT = "/tmp/agentos-bench-memory-1m";
/** Bump when the data sets change shape (the generator, the schema): the cache is refilled. */
const CACHE_VERSION = 1;

/** AGENTOS_BENCH_MEMORY_SCALE (e.g. 0.01) shrinks the data sets for a quick try; 1 is the benchmark. */
const SCALE = Number(process.env.AGENTOS_BENCH_MEMORY_SCALE ?? 1);
const BIG = Math.round(1_000_000 * SCALE);
const SMALL = 1_000;
const AGENTS = Math.round(10_000 * SCALE);
const FEW_AGENTS = 10;
/** Memories per agent of the many-agents service: 10 000 × 100 = 1 M entries, as many as the big agent. */
const PER_AGENT = 100;
const BATCH = 100;
const SPAN_MS = 365 * 24 * 60 * 60 * 1000;
const QUERIES = 500;
const WARM_UP = 50;
const ROUND_S = 3;
const ROUNDS = 3;
const STARTS = 3;
const PG_ENTRIES = 100_000;
const API_KEY = "bench-admin-key-0123456789";
const AUTH = { authorization: `Bearer ${API_KEY}` };

const TARGET_RECALL_P99_MS = 20;
const TARGET_TURN_RATIO = 1.5;
const TARGET_START_MS = 5000;
const TARGET_RATIO = 1.25;

const ms = (value: number) => `${value.toFixed(2)} ms`;
const verdict = (met: boolean) => (met ? "met" : "MISSED");
const count = (value: number) => value.toLocaleString("en");

function serviceConfig(dataDir: string, extra: Record<string, string> = {}) {
  return {
    ...loadConfig({
      AGENTOS_DATA_DIR: dataDir,
      AGENTOS_API_KEY: API_KEY,
      AGENTOS_LOG_LEVEL: "warn",
      OPENAI_API_KEY: "sk-bench",
      ...extra,
    }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
  };
}

async function inProcess<T>(dataDir: string, run: (service: AgentOS) => Promise<T>): Promise<T> {
  const service = await createAgentOS(serviceConfig(dataDir));
  try {
    return await run(service);
  } finally {
    await service.close();
  }
}

interface Marker {
  version: number;
  spec: unknown;
  [key: string]: unknown;
}

/**
 * A data set's directory for this run: the pristine fill when its marker matches `spec`, else filled
 * now by `build` (which returns what the marker keeps, e.g. agent ids); then copied to a run directory.
 */
async function dataSet(
  name: string,
  spec: unknown,
  build: (dataDir: string) => Promise<Record<string, unknown>>,
): Promise<{ dir: string; pristine: string; marker: Marker; cached: boolean }> {
  const pristine = join(CACHE_ROOT, name, "pristine");
  const markerFile = join(CACHE_ROOT, name, "marker.json");
  let marker: Marker | undefined;
  try {
    marker = JSON.parse(readFileSync(markerFile, "utf8")) as Marker;
  } catch {
    marker = undefined;
  }
  const cached =
    marker !== undefined &&
    marker.version === CACHE_VERSION &&
    JSON.stringify(marker.spec) === JSON.stringify(spec) &&
    existsSync(pristine);
  if (!cached || !marker) {
    rmSync(join(CACHE_ROOT, name), { recursive: true, force: true });
    mkdirSync(pristine, { recursive: true });
    marker = { version: CACHE_VERSION, spec, ...(await build(pristine)) };
    writeFileSync(markerFile, JSON.stringify(marker));
  }
  const dir = join(CACHE_ROOT, name, "run");
  rmSync(dir, { recursive: true, force: true });
  cpSync(pristine, dir, { recursive: true });
  return { dir, pristine, marker, cached };
}

async function newAgent(service: AgentOS, name: string): Promise<string> {
  const created = (await service.engine.trigger({
    function_id: "agent::create",
    payload: { name, model: "gpt-4o" },
  })) as { id: string };
  return created.id;
}

/**
 * Stores `entries` memories of the agent through memory::store_many, BATCH at a time, their creation
 * times spread over the year before `endMs` (the clock is set for each batch); returns the seconds taken.
 */
async function fill(service: AgentOS, agentId: string, entries: number, seed: number, endMs: number) {
  const text = entryTexts(seed);
  const start = performance.now();
  try {
    for (let i = 0; i < entries; i += BATCH) {
      const at = endMs - SPAN_MS + Math.floor((i / entries) * SPAN_MS);
      setClock({ now: () => at });
      const size = Math.min(BATCH, entries - i);
      await service.engine.trigger({
        function_id: "memory::store_many",
        payload: {
          agentId,
          entries: Array.from({ length: size }, (_, j) => ({
            content: text(),
            sessionId: `session-${(i + j) >> 6}`,
            role: j % 2 === 0 ? "user" : "assistant",
          })),
        },
      });
    }
  } finally {
    setClock(null);
  }
  return (performance.now() - start) / 1000;
}

/** SQLite files of a data dir after a checkpoint (the service's close checkpoints the WAL). */
function sqliteBytes(dataDir: string): number {
  let total = 0;
  for (const suffix of ["", "-wal", "-shm"]) {
    const file = join(dataDir, `agentos.db${suffix}`);
    if (existsSync(file)) total += statSync(file).size;
  }
  return total;
}

/** Latencies (ms, sorted) of QUERIES calls after WARM_UP, each with the next generated question. */
async function latencies(run: (query: string) => Promise<unknown>): Promise<number[]> {
  const next = queryTexts(3);
  for (let i = 0; i < WARM_UP; i++) await run(next());
  const taken: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const query = next();
    const start = performance.now();
    await run(query);
    taken.push(performance.now() - start);
  }
  return taken.sort((a, b) => a - b);
}

function latencyLine(label: string, sorted: number[], target?: number): number {
  const p99 = percentile(sorted, 99);
  const goal = target === undefined ? "" : `  target p99 < ${target} ms: ${verdict(p99 < target)}`;
  console.log(
    `  ${label.padEnd(44)} p50 ${ms(percentile(sorted, 50))}  p99 ${ms(p99)}  max ${ms(sorted[sorted.length - 1])}${goal}`,
  );
  return p99;
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  mean: number;
}

/** One connection (or `connections`) for ROUND_S against the service, cycling through the bodies. */
async function load(
  url: string,
  method: "GET" | "POST",
  bodies: unknown[] | undefined,
  connections = 1,
): Promise<Load> {
  const result = await autocannon({
    url,
    connections,
    duration: ROUND_S,
    workers: 1,
    headers: { "content-type": "application/json", ...AUTH },
    requests: (bodies ?? [undefined]).map((body) => ({
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })),
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${method} ${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: result.latency.average,
  };
}

/** Alternating rounds of the two loads after a warm-up of each; the median of each figure. */
async function alternate(a: () => Promise<Load>, b: () => Promise<Load>): Promise<[Load, Load]> {
  await a();
  await b();
  const runs: [Load[], Load[]] = [[], []];
  for (let round = 0; round < ROUNDS; round++) {
    runs[0].push(await a());
    runs[1].push(await b());
  }
  const pick = (of: Load[]): Load => ({
    rps: median(of.map((run) => run.rps)),
    p50: median(of.map((run) => run.p50)),
    p99: median(of.map((run) => run.p99)),
    mean: median(of.map((run) => run.mean)),
  });
  return [pick(runs[0]), pick(runs[1])];
}

const loadLine = (label: string, run: Load) =>
  console.log(
    `  ${label.padEnd(44)} ${count(Math.round(run.rps))} req/s, mean ${ms(run.mean)}, p50 ${run.p50} ms, p99 ${run.p99} ms`,
  );

/** Turn messages that share the memories' common words. */
function messages(): Array<{ message: string }> {
  const next = queryTexts(11);
  return Array.from({ length: 16 }, () => ({ message: next() }));
}

/** `agentos serve` from spawn to the first GET /healthz 200 (polled every 5 ms), then stopped. */
async function timeStart(dataDir: string): Promise<number> {
  const port = await freePort();
  const enginePort = await freePort();
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("AGENTOS_") && !name.endsWith("_API_KEY")) env[name] = value;
  }
  Object.assign(env, {
    AGENTOS_LOG_LEVEL: "warn",
    AGENTOS_API_KEY: API_KEY,
    OPENAI_API_KEY: "sk-bench",
    AGENTOS_DATA_DIR: dataDir,
    AGENTOS_PORT: String(port),
    AGENTOS_HOST: "127.0.0.1",
    AGENTOS_ENGINE_PORT: String(enginePort),
  });
  const start = performance.now();
  const child = spawn(NODE, [CLI, "serve"], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`agentos serve exited during start:\n${stderr}`);
      if (performance.now() - start > 60_000) throw new Error("agentos serve did not start within 60 s");
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return performance.now() - start;
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

/** Part 1: recall and the agent turn at 1 000 000 memories against 1 000. */
async function oneMillion(): Promise<void> {
  console.log(`\n## Memory at scale: one agent with ${count(BIG)} memories (SQLite, cached fill)`);
  const set = await dataSet(`agent-${BIG}`, { big: BIG, small: SMALL, batch: BATCH }, (dataDir) =>
    inProcess(dataDir, async (service) => {
      const end = Date.now();
      const big = await newAgent(service, "bench-1m");
      const small = await newAgent(service, "bench-1k");
      const seconds = await fill(service, big, BIG, 1, end);
      await fill(service, small, SMALL, 2, end);
      return { big, small, fillSeconds: seconds };
    }),
  );
  const { big, small, fillSeconds } = set.marker as Marker & {
    big: string;
    small: string;
    fillSeconds: number;
  };
  console.log(
    `  fill: ${count(BIG)} entries via memory::store_many (${BATCH} a call) in ${fillSeconds.toFixed(1)} s = ` +
      `${count(Math.round(BIG / fillSeconds))} entries/s${set.cached ? ` (cached in ${set.pristine}; marker matched)` : " (filled now)"}`,
  );
  const bytes = sqliteBytes(set.pristine);
  const entries = BIG + SMALL;
  console.log(
    `  SQLite storage: ${count(bytes)} bytes for ${count(entries)} entries = ${Math.round(bytes / entries)} bytes/entry ` +
      "(agentos.db + WAL after checkpoint; text, entry JSON, FTS5 index)",
  );

  await inProcess(set.dir, async (service) => {
    await textIndexMerged(set.dir, "1 M entries");
    const recall = (agentId: string) => (query: string) =>
      service.engine.trigger({ function_id: "memory::recall", payload: { agentId, query } });
    const smallP99 = latencyLine(
      `memory::recall, ${count(SMALL)} entries (baseline)`,
      await latencies(recall(small)),
    );
    const bigP99 = latencyLine(
      `memory::recall, ${count(BIG)} entries`,
      await latencies(recall(big)),
      TARGET_RECALL_P99_MS,
    );
    console.log(`  recall p99 ratio 1 M / 1 k: ${(bigP99 / smallP99).toFixed(2)}`);
  });

  const fake = await startFakeOpenAI();
  let service: ServeProcess | undefined;
  try {
    service = await startServe({
      dataDir: set.dir,
      env: {
        AGENTOS_API_KEY: API_KEY,
        AGENTOS_RATE_LIMITS: "off",
        OPENAI_API_KEY: "sk-bench",
        OPENAI_BASE_URL: fake.baseUrl,
      },
    });
    const url = service.url;
    const bodies = messages();
    const turn = (agentId: string) => () => load(`${url}/api/agents/${agentId}/message`, "POST", bodies);
    const [few, many] = await alternate(turn(small), turn(big));
    console.log(
      `  POST /api/agents/:id/message, instant fake model, 1 connection (median of ${ROUNDS} × ${ROUND_S} s):`,
    );
    loadLine(`turn, ${count(SMALL)} memories (baseline)`, few);
    loadLine(`turn, ${count(BIG)} memories`, many);
    const ratio = few.rps / many.rps;
    console.log(
      `  turn time 1 M / 1 k (1 / throughput, 1 connection): ${ratio.toFixed(2)}  target ≤ ${TARGET_TURN_RATIO}: ${verdict(ratio <= TARGET_TURN_RATIO)}`,
    );
  } finally {
    await service?.stop("SIGTERM").catch(() => undefined);
    await fake.close();
    rmSync(set.dir, { recursive: true, force: true });
  }
}

/** A data set of `agents` agents with PER_AGENT memories each; the marker keeps a few agent ids. */
function manyAgents(agents: number) {
  return dataSet(`agents-${agents}x${PER_AGENT}`, { agents, perAgent: PER_AGENT }, (dataDir) =>
    inProcess(dataDir, async (service) => {
      const end = Date.now();
      const ids: string[] = [];
      const start = performance.now();
      for (let i = 0; i < agents; i++) ids.push(await newAgent(service, `bench-agent-${i}`));
      const createSeconds = (performance.now() - start) / 1000;
      const fillStart = performance.now();
      for (let i = 0; i < agents; i++) await fill(service, ids[i], PER_AGENT, 100 + i, end);
      const fillSeconds = (performance.now() - fillStart) / 1000;
      return { ids: [ids[0], ids[Math.floor(agents / 2)], ids[agents - 1]], createSeconds, fillSeconds };
    }),
  );
}

interface ServiceFigures {
  startMs: number;
  list: Load;
  recall: Load;
  turn: Load;
}

/** Waits until the serving process has merged the text index of `dataDir` into one segment. */
async function textIndexMerged(dataDir: string, label: string): Promise<void> {
  const db = new DatabaseSync(join(dataDir, "agentos.db"), { readOnly: true });
  const count = db.prepare("SELECT count(DISTINCT segid) AS n FROM search_fts_idx");
  const segments = () => Number((count.get() as { n: number }).n);
  const start = performance.now();
  const before = segments();
  try {
    while (segments() > 1 && performance.now() - start < 120_000)
      await new Promise((resolve) => setTimeout(resolve, 250));
    console.log(
      `  ${label}: text index merged while idle, ${before} → ${segments()} segments in ${((performance.now() - start) / 1000).toFixed(1)} s`,
    );
  } finally {
    db.close();
  }
}

/** Part 2: start, list, recall and turn of a service with 10 000 agents against one with 10. */
async function tenThousandAgents(): Promise<void> {
  console.log(
    `\n## Memory at scale: a service with ${count(AGENTS)} agents × ${count(PER_AGENT)} memories (SQLite, cached fill)`,
  );
  console.log(
    `  (${count(AGENTS)} × 1 000 = 10 M entries would take ~10× the 1 M fill and ~10 GB here; ` +
      `× ${PER_AGENT} = ${count(AGENTS * PER_AGENT)} entries, as many as the 1 M agent, in one file)`,
  );
  const sets = { few: await manyAgents(FEW_AGENTS), many: await manyAgents(AGENTS) };
  const { createSeconds, fillSeconds } = sets.many.marker as Marker & {
    createSeconds: number;
    fillSeconds: number;
  };
  console.log(
    `  fill: ${count(AGENTS)} agents via agent::create in ${createSeconds.toFixed(1)} s ` +
      `(${count(Math.round(AGENTS / createSeconds))}/s), ${count(AGENTS * PER_AGENT)} memories in ${fillSeconds.toFixed(1)} s ` +
      `(${count(Math.round((AGENTS * PER_AGENT) / fillSeconds))} entries/s)${sets.many.cached ? " (cached; marker matched)" : " (filled now)"}`,
  );
  const fake = await startFakeOpenAI();
  const figures: Record<"few" | "many", ServiceFigures> = {} as Record<"few" | "many", ServiceFigures>;
  try {
    const starts: Record<"few" | "many", number[]> = { few: [], many: [] };
    for (let i = 0; i < STARTS; i++) {
      for (const which of ["few", "many"] as const) starts[which].push(await timeStart(sets[which].dir));
    }
    const servers: Partial<Record<"few" | "many", ServeProcess>> = {};
    try {
      for (const which of ["few", "many"] as const) {
        servers[which] = await startServe({
          dataDir: sets[which].dir,
          env: {
            AGENTOS_API_KEY: API_KEY,
            AGENTOS_RATE_LIMITS: "off",
            OPENAI_API_KEY: "sk-bench",
            OPENAI_BASE_URL: fake.baseUrl,
          },
        });
      }
      // A service merges its text index's segments once idle (sqlite-merge.ts), as a long-running one
      // has: measured after that, as it answers for most of its life.
      for (const which of ["few", "many"] as const) await textIndexMerged(sets[which].dir, which);
      const agentOf = (which: "few" | "many") => (sets[which].marker.ids as string[])[1];
      const url = (which: "few" | "many") => (servers[which] as ServeProcess).url;
      const queries = messages().map(({ message }) => ({ query: message }));
      // Pages of the same size (the few agents' whole list), so both answer with as many agents.
      const list = (which: "few" | "many") => () =>
        load(`${url(which)}/api/agents?limit=${FEW_AGENTS}`, "GET", undefined);
      const recall = (which: "few" | "many") => () =>
        load(`${url(which)}/api/agents/${agentOf(which)}/memory`, "POST", queries);
      const turn = (which: "few" | "many") => () =>
        load(`${url(which)}/api/agents/${agentOf(which)}/message`, "POST", messages());
      const [fewList, manyList] = await alternate(list("few"), list("many"));
      const [fewRecall, manyRecall] = await alternate(recall("few"), recall("many"));
      const [fewTurn, manyTurn] = await alternate(turn("few"), turn("many"));
      figures.few = { startMs: median(starts.few), list: fewList, recall: fewRecall, turn: fewTurn };
      figures.many = { startMs: median(starts.many), list: manyList, recall: manyRecall, turn: manyTurn };
    } finally {
      for (const server of Object.values(servers)) await server?.stop("SIGTERM").catch(() => undefined);
    }
  } finally {
    await fake.close();
    for (const set of Object.values(sets)) rmSync(set.dir, { recursive: true, force: true });
  }
  const { few, many } = figures;
  console.log(
    `  start (spawn → first /healthz 200, median of ${STARTS}): ${count(FEW_AGENTS)} agents ${ms(few.startMs)} (baseline), ` +
      `${count(AGENTS)} agents ${ms(many.startMs)}  target < ${TARGET_START_MS} ms: ${verdict(many.startMs < TARGET_START_MS)}; ` +
      `ratio ${(many.startMs / few.startMs).toFixed(2)}`,
  );
  for (const [label, key] of [
    [`GET /api/agents?limit=${FEW_AGENTS} (first page)`, "list"],
    ["POST /api/agents/:id/memory (recall)", "recall"],
    ["POST /api/agents/:id/message (turn)", "turn"],
  ] as const) {
    loadLine(`${label}, ${count(FEW_AGENTS)} agents`, few[key]);
    loadLine(`${label}, ${count(AGENTS)} agents`, many[key]);
    // One connection: a request's time is 1 / throughput. Autocannon's latencies are whole
    // milliseconds, too coarse for requests that take well under one.
    const ratio = few[key].rps / many[key].rps;
    console.log(
      `  time a request ${count(AGENTS)} / ${count(FEW_AGENTS)} agents (1 / throughput, 1 connection): ` +
        `${ms(1000 / many[key].rps)} / ${ms(1000 / few[key].rps)} = ${ratio.toFixed(2)}  target ≤ ${TARGET_RATIO}: ${verdict(ratio <= TARGET_RATIO)}`,
    );
  }
}

/** Part 3 (PostgreSQL): bytes per entry in a throwaway schema, and the fill rate of putMany. */
async function postgresStorage(): Promise<void> {
  console.log(
    `\n## Memory at scale: PostgreSQL storage per entry (${count(PG_ENTRIES)} entries, throwaway schema)`,
  );
  const found = await findTestPostgres();
  if (found.url === null) {
    console.log(`  skipped: ${found.reason}`);
    return;
  }
  const schema = uniqueSchema();
  const index = await PostgresTextIndex.open({ connectionString: found.url, schema, max: 4 });
  try {
    const text = entryTexts(1);
    const end = Date.now();
    const start = performance.now();
    for (let i = 0; i < PG_ENTRIES; i += BATCH) {
      const createdAt = new Date(end - SPAN_MS + Math.floor((i / PG_ENTRIES) * SPAN_MS)).toISOString();
      await index.putMany(
        "memory",
        "agent-pg",
        Array.from({ length: Math.min(BATCH, PG_ENTRIES - i) }, (_, j) => {
          const id = `mem_${String(i + j).padStart(20, "0")}`;
          const content = text();
          const entry = {
            id,
            agentId: "agent-pg",
            sessionId: `session-${(i + j) >> 6}`,
            role: "user",
            content,
            createdAt,
          };
          return { id, doc: { text: content, data: entry, createdAt } };
        }),
      );
    }
    const seconds = (performance.now() - start) / 1000;
    const client = new Client({ connectionString: found.url });
    await client.connect();
    try {
      await client.query(`VACUUM ANALYZE "${schema}".search_docs`);
      const { rows } = await client.query<{ bytes: string }>(
        `SELECT pg_total_relation_size('"${schema}".search_docs') + pg_total_relation_size('"${schema}".search_scopes') AS bytes`,
      );
      const bytes = Number(rows[0].bytes);
      console.log(
        `  fill: ${count(PG_ENTRIES)} entries via putMany in ${seconds.toFixed(1)} s = ${count(Math.round(PG_ENTRIES / seconds))} entries/s`,
      );
      console.log(
        `  PostgreSQL storage: ${count(bytes)} bytes = ${Math.round(bytes / PG_ENTRIES)} bytes/entry ` +
          "(pg_total_relation_size of search_docs + search_scopes: heap, TOAST, GIN and B-tree indexes)",
      );
    } finally {
      await client.end();
    }
  } finally {
    await index.close();
    await dropSchema(found.url, schema);
  }
}

/** AGENTOS_BENCH_MEMORY_PARTS (e.g. "1m,pg") runs some of the parts: 1m, agents, pg; all by default. */
export async function benchMemoryScale(): Promise<void> {
  const parts = (process.env.AGENTOS_BENCH_MEMORY_PARTS ?? "1m,agents,pg").split(",");
  mkdirSync(CACHE_ROOT, { recursive: true });
  if (parts.includes("1m")) await oneMillion();
  if (parts.includes("agents")) await tenThousandAgents();
  if (parts.includes("pg")) await postgresStorage();
}
