import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CliResult,
  freePort,
  makeDataDir,
  removeDir,
  runCli,
  type ServeProcess,
  startServe,
} from "../helpers/process.ts";

const ADMIN_KEY = "cli-migrate-admin-key-0123456789abc";
const FIXTURES = join(import.meta.dirname, "../fixtures/migrate");
let dataDir: string;
let base: string;
let server: ServeProcess;

function agentos(port: number, ...args: string[]): Promise<CliResult> {
  return runCli(
    args,
    {
      AGENTOS_DATA_DIR: dataDir,
      AGENTOS_HOME: dataDir,
      AGENTOS_PORT: String(port),
      AGENTOS_API_KEY: ADMIN_KEY,
      AGENTOS_MIGRATE_ROOTS: base,
      AGENTOS_LOG_LEVEL: "warn",
    },
    60_000,
  );
}

beforeAll(async () => {
  dataDir = makeDataDir();
  base = mkdtempSync(join(tmpdir(), "agentos-cli-migrate-"));
  cpSync(FIXTURES, base, { recursive: true });
  server = await startServe({
    dataDir,
    env: { AGENTOS_API_KEY: ADMIN_KEY, AGENTOS_HOME: dataDir, AGENTOS_MIGRATE_ROOTS: base },
  });
});
afterAll(async () => {
  await server?.stop();
  removeDir(dataDir);
  rmSync(base, { recursive: true, force: true });
});

describe("agentos migrate", () => {
  it("scans, dry-runs, migrates with a line per item and a summary, and reports, through the running service", async () => {
    const scanned = await agentos(server.port, "migrate", "scan", base);
    expect(scanned.code, scanned.stderr).toBe(0);
    expect(scanned.stdout).toMatch(/crewai\s+yes\s+0\.86\.0/);
    expect(scanned.stdout).toContain("6 of 6 frameworks found.");
    const scannedJson = await agentos(server.port, "migrate", "scan", base, "--json");
    expect(JSON.parse(scannedJson.stdout).summary).toMatchObject({ found: 6, scanned: 6 });

    const dry = await agentos(server.port, "migrate", "crewai", join(base, "crewai"), "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/would write\s+agent\s+city_expert\s+agents\/city_expert\/agent\.toml/);
    // The vault entries it would write are named (never their values).
    expect(dry.stdout).toMatch(/would store\s+secret\s+provider:openai:api_key/);
    expect(dry.stdout).toContain("Nothing was written.");
    expect(existsSync(join(dataDir, "agents"))).toBe(false);

    const real = await agentos(server.port, "migrate", "crewai", join(base, "crewai"));
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toMatch(/wrote\s+workflow\s+trip-planner\s+workflows\/trip-planner\.yaml/);
    expect(real.stdout).toMatch(/stored\s+secret\s+provider:openai:api_key/);
    expect(real.stdout).toMatch(/agent\s+2\s+0/);
    const listed = (await (await server.request("/api/agents", { key: ADMIN_KEY })).json()) as {
      agents: Array<{ name: string }>;
    };
    expect(listed.agents.map((agent) => agent.name)).toEqual(
      expect.arrayContaining(["city_expert", "travel_writer"]),
    );

    const report = await agentos(server.port, "migrate", "report", "--format", "markdown");
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain("| crewai | 1 | 4 | 0 | 0 |");
  });

  it("works without a running service, on the same storage", async () => {
    const scanned = await agentos(await freePort(), "migrate", "scan", base);
    expect(scanned.code, scanned.stderr).toBe(0);
    expect(scanned.stdout).toMatch(/openclaw\s+yes\s+2026\.2\.3/);
    const refused = await agentos(await freePort(), "migrate", "openclaw", "/etc");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/outside the directories a migration may read/);
  });
});
