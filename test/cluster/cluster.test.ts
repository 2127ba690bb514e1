import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentOS, createAgentOS } from "../../src/app.ts";
import { CRON_CLAIMS_SCOPE } from "../../src/engine/trigger-types/cron.ts";
import { findTestPostgres } from "../engine/state/contract.ts";
import {
  CLUSTER_ADMIN_KEY as ADMIN_KEY,
  type Cluster,
  nodeConfig,
  startCluster,
} from "../helpers/cluster.ts";

type CronPayload = { scheduled_time: string };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dirs: string[] = [];

/** Registers the same every-second cron schedule on a node, as every node of a deployment would. */
function scheduleEverySecond(
  service: AgentOS,
  name: string,
  fired: Array<{ node: string; at: string }>,
): { unregister(): void } {
  service.engine.registerFunction("cluster-test", { id: "cluster::tick" }, (payload) => {
    fired.push({ node: name, at: (payload as CronPayload).scheduled_time });
  });
  return service.engine.registerTrigger("cluster-test", {
    type: "cron",
    function_id: "cluster::tick",
    config: { expression: "* * * * * *" },
  });
}

function health(service: AgentOS, remoteAddress = "127.0.0.1") {
  return service.http.inject({
    method: "GET",
    url: "/api/health",
    remoteAddress,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping cluster-mode tests: ${found.reason}`);

describe.skipIf(found.url === null)("cluster mode: two nodes on one PostgreSQL", () => {
  let cluster: Cluster;
  let nodeA: AgentOS;
  let nodeB: AgentOS;

  beforeAll(async () => {
    cluster = await startCluster(found.url ?? "", 2, {
      AGENTOS_RATE_LIMITS: "read=5",
      AGENTOS_RATE_LIMIT_ADMIN: "1",
    });
    [nodeA, nodeB] = cluster.nodes as [AgentOS, AgentOS];
  });

  afterAll(async () => {
    await cluster?.close();
  });

  it("shares one rate-limit budget per client between nodes", async () => {
    const statuses: number[] = [];
    const remaining: Array<string | undefined> = [];
    for (let i = 0; i < 8; i++) {
      const response = await health(i % 2 ? nodeB : nodeA, "10.0.0.1");
      statuses.push(response.statusCode);
      remaining.push(response.headers["ratelimit-remaining"] as string | undefined);
      if (response.statusCode === 429) {
        expect(Number(response.headers["retry-after"])).toBeGreaterThan(0);
        expect(response.json()).toMatchObject({ error: expect.stringMatching(/Rate limit/) });
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(remaining.slice(0, 5)).toEqual(["4", "3", "2", "1", "0"]);
    // Another client has its own budget.
    expect((await health(nodeB, "10.0.0.2")).statusCode).toBe(200);
  });

  it("allows exactly the limit when one client's requests race on both nodes", async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => health(i % 2 ? nodeB : nodeA, "10.0.0.3")),
    );
    expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(5);
    expect(responses.filter((response) => response.statusCode === 429)).toHaveLength(15);
  });

  it("runs each cron tick on exactly one node", async () => {
    const fired: Array<{ node: string; at: string }> = [];
    const schedules = [scheduleEverySecond(nodeA, "A", fired), scheduleEverySecond(nodeB, "B", fired)];
    await sleep(3_200);
    for (const schedule of schedules) schedule.unregister();
    const seconds = fired.map((entry) => entry.at);
    expect(seconds.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seconds).size).toBe(seconds.length);
    const claims = await nodeA.store.list(CRON_CLAIMS_SCOPE, { limit: 1000 });
    for (const entry of fired) {
      const claim = claims.items.find((item) => item.key === `${entry.at}|cluster::tick|* * * * * *`);
      expect(claim?.value).toMatchObject({ node: expect.any(String) });
    }
  });
});

describe("embedded mode: one node", () => {
  it("runs cron ticks without writing claims", async () => {
    const service = await createAgentOS(nodeConfig({}, dirs));
    try {
      const fired: Array<{ node: string; at: string }> = [];
      scheduleEverySecond(service, "only", fired);
      await sleep(1_300);
      expect(fired.length).toBeGreaterThan(0);
      expect((await service.store.list(CRON_CLAIMS_SCOPE, { limit: 10 })).items).toEqual([]);
    } finally {
      await service.close();
    }
  });
});
