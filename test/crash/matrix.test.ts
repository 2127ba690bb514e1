import { execFileSync } from "node:child_process";
import { Client as PgClient } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { dropSchema, findTestPostgres, uniqueSchema } from "../engine/state/contract.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.ts";
import { makeDataDir, removeDir, type ServeProcess, startServe } from "../helpers/process.ts";
import { type Client, type CrashDomain, DOMAINS, send } from "./domains.ts";

/**
 * The crash matrix (issue #22): every domain writes concurrently against a real service process, which
 * is killed with SIGKILL at a random moment and restarted on the same data; then every acknowledged
 * write must be there exactly once, the audit chain must verify and no process of the old one may be
 * left. Two cycles per backend; PostgreSQL where one is reachable.
 */
const KEY = "crash-matrix-admin-key-0123456789";
const CYCLES = 2;
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
});

interface Backend {
  name: string;
  env: Record<string, string>;
}

/** The processes a process started, and theirs (from `ps`). */
function descendants(pid: number): number[] {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const [child, ppid] of rows) {
      if (ppid === parent && !found.includes(child)) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs the domains through `cycles` kill -9 cycles; returns each domain's problems (empty: all good). */
async function runMatrix(
  domains: CrashDomain[],
  backend: Backend,
  fake: FakeOpenAI,
  cycles = CYCLES,
): Promise<Record<string, string[]>> {
  const dataDir = makeDataDir();
  cleanups.push(() => removeDir(dataDir));
  const env = {
    AGENTOS_API_KEY: KEY,
    AGENTOS_RATE_LIMITS: "off",
    OPENAI_API_KEY: "sk-crash",
    OPENAI_BASE_URL: fake.baseUrl,
    ...backend.env,
  };
  let server: ServeProcess = await startServe({ dataDir, env });
  cleanups.push(() => server.stop("SIGKILL"));
  const shared: Record<string, string> = {};
  const client = (): Client => ({ server, key: KEY, shared });
  for (const domain of domains) await domain.setup?.(client());
  const acked = new Map<string, string[]>(domains.map((domain) => [domain.name, []]));
  const problems: Record<string, string[]> = Object.fromEntries(domains.map((domain) => [domain.name, []]));

  for (let cycle = 0; cycle < cycles; cycle++) {
    let stopped = false;
    let next = cycle * 100_000;
    const lane = async (domain: CrashDomain) => {
      while (!stopped) {
        const i = next++;
        const id = await domain.write(client(), i).catch(() => null);
        // An answer that arrived is acknowledged, even if the kill came right after it.
        if (id !== null) acked.get(domain.name)?.push(id);
      }
    };
    const lanes = domains.flatMap((domain) => [lane(domain), lane(domain)]);
    // Long enough that the slowest domain (an agent turn on PostgreSQL, among 30 lanes) gets answers
    // even on a loaded machine.
    await new Promise((resolve) => setTimeout(resolve, 2000 + Math.random() * 1000));
    const killed = server.child.pid as number;
    // Whatever the service started (bridge runs, shell tools, a browser) must die with it or be reaped.
    const children = descendants(killed);
    await server.stop("SIGKILL");
    stopped = true;
    await Promise.all(lanes);
    const left = [killed, ...children].filter(alive);
    if (left.length > 0)
      note(problems, "orphans", `after kill -9 of ${killed}, still running: ${left.join(", ")}`);
    server = await startServe({ dataDir, env });
    for (const domain of domains) {
      const ids = acked.get(domain.name) ?? [];
      const found = await domain.verify(client(), ids);
      problems[domain.name]?.push(...found.map((problem) => `cycle ${cycle}: ${problem}`));
    }
    const audit = await send(client(), "GET", "/api/audit/verify");
    if (!audit.body?.valid) note(problems, "audit", `cycle ${cycle}: ${JSON.stringify(audit.body)}`);
  }
  await server.stop("SIGTERM");
  // A domain whose writes all failed would pass vacuously.
  for (const [name, ids] of acked) {
    if (ids.length === 0) note(problems, name, "no write was acknowledged at all");
    else console.log(`crash matrix (${backend.name}): ${name}: ${ids.length} acknowledged writes checked`);
  }
  return problems;
}

function note(problems: Record<string, string[]>, where: string, problem: string): void {
  problems[where] = [...(problems[where] ?? []), problem];
}

const found = await findTestPostgres();
if (found.url === null) console.warn(`Crash matrix: skipping PostgreSQL: ${found.reason}`);

describe("the crash matrix", () => {
  let fake: FakeOpenAI;
  it("loses no acknowledged write of any domain to kill -9 (SQLite)", async () => {
    fake = await startFakeOpenAI();
    cleanups.push(() => fake.close());
    const problems = await runMatrix(DOMAINS, { name: "sqlite", env: {} }, fake);
    expect(problems).toEqual(Object.fromEntries(DOMAINS.map((domain) => [domain.name, []])));
  }, 120_000);

  it.skipIf(found.url === null)(
    "loses no acknowledged write of any domain to kill -9 (PostgreSQL)",
    async () => {
      fake ??= await startFakeOpenAI();
      const url = found.url ?? "";
      const schema = uniqueSchema();
      const admin = new PgClient({ connectionString: url });
      await admin.connect();
      await admin.query(`CREATE SCHEMA "${schema}"`);
      await admin.end();
      cleanups.push(() => dropSchema(url, schema));
      const scoped = `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      // Cluster mode: a run the kill caught is taken over once its lease lapses (3 s here, 15 s by default).
      const env = {
        AGENTOS_DATABASE_URL: scoped,
        AGENTOS_VAULT_KEY: "ef".repeat(32),
        AGENTOS_WORKFLOW_LEASE_MS: "3000",
      };
      const problems = await runMatrix(DOMAINS, { name: "postgres", env }, fake);
      expect(problems).toEqual(Object.fromEntries(DOMAINS.map((domain) => [domain.name, []])));
    },
    120_000,
  );

  it("catches a domain that acknowledges a write it never makes", async () => {
    fake ??= await startFakeOpenAI();
    // A planted lost write: every fifth acknowledgement names a directive that was never stored.
    const real = DOMAINS.find((domain) => domain.name === "directives") as CrashDomain;
    const lossy: CrashDomain = {
      name: "lossy directives",
      write: async (client, i) => (i % 5 === 0 ? `dir-never-stored-${i}` : real.write(client, i)),
      verify: real.verify,
    };
    const problems = await runMatrix([lossy], { name: "sqlite", env: {} }, fake, 1);
    expect(problems["lossy directives"]?.length).toBeGreaterThan(0);
    expect(problems["lossy directives"]?.[0]).toMatch(/dir-never-stored-\d+ found 0 times/);
  }, 60_000);
});
