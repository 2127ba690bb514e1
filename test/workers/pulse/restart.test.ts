import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { eventually } from "../../helpers/iii.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";
import { pulseTriggers, registered, setup, statusOf } from "./helpers.ts";

let fake: FakeOpenAI;
let dataDir: string;
const servers: TestServer[] = [];

beforeEach(async () => {
  fake = await startFakeOpenAI();
  dataDir = mkdtempSync(join(tmpdir(), "agentos-pulse-restart-"));
});
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A server on the shared data dir (the same SQLite file across restarts). */
async function start(): Promise<TestServer> {
  const server = await startTestServer({
    dataDir,
    env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl },
  });
  servers.push(server);
  return server;
}

it("schedules stored pulses again after a restart, with their enabled flag and cron", async () => {
  const first = await start();
  const { realmId, agentId } = await setup(first);
  await registered(first, { realmId, agentId, cron: "* * * * * *", contextMode: "Full" });
  await first.close();
  servers.splice(0);
  const ranBefore = fake.requests.length;
  const restartedAt = new Date().toISOString();

  const second = await start();
  expect(pulseTriggers(second, agentId)).toHaveLength(1);
  type Run = { status: string; startedAt: string };
  const isNew = (run: Run) => run.status === "Completed" && run.startedAt >= restartedAt;
  const status = await eventually(async () => {
    const current = await statusOf(second, realmId, agentId);
    return current.recentRuns.some(isNew) ? current : undefined;
  }, 15_000);
  expect(status.config).toMatchObject({ cron: "* * * * * *", enabled: true, contextMode: "Full" });
  expect(status.recentRuns.find(isNew)).toMatchObject({ source: "cron", contextSnapshot: { mode: "full" } });
  expect(fake.requests.length).toBeGreaterThan(ranBefore);
}, 30_000);
