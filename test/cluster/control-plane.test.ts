import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentOS } from "../../src/app.ts";
import { findTestPostgres } from "../engine/state/contract.ts";
import { CLUSTER_ADMIN_KEY, type Cluster, startCluster } from "../helpers/cluster.ts";
import { eventually, sleep } from "../helpers/iii.ts";

// biome-ignore lint/suspicious/noExplicitAny: assertions read arbitrary JSON bodies
type Body = any;

async function call(node: AgentOS, method: string, url: string, payload?: unknown): Promise<Body> {
  const response = await node.http.inject({
    method: method as "GET",
    url,
    headers: { authorization: `Bearer ${CLUSTER_ADMIN_KEY}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  if (response.statusCode >= 300)
    throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return response.body ? response.json() : undefined;
}

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping control-plane cluster tests: ${found.reason}`);

describe.skipIf(found.url === null)("control plane on two nodes sharing one PostgreSQL", () => {
  let cluster: Cluster;
  let nodeA: AgentOS;
  let nodeB: AgentOS;
  let realmId: string;
  let agentId: string;

  beforeAll(async () => {
    cluster = await startCluster(found.url ?? "", 2, { AGENTOS_RATE_LIMITS: "off" });
    [nodeA, nodeB] = cluster.nodes as [AgentOS, AgentOS];
    realmId = (await call(nodeA, "POST", "/api/realms", { name: "cluster", owner: "ops" })).id;
    agentId = (await call(nodeB, "POST", "/api/agents", { name: "worker", realmId })).id;
  });

  afterAll(async () => {
    await cluster?.close();
  });

  it("counts concurrent spends made on both nodes exactly, and a check on either node sees them", async () => {
    await call(nodeA, "POST", "/api/ledger/budget", { realmId, agentId, monthlyCents: 1_000_000 });
    const spend = { realmId, agentId, provider: "openai", model: "gpt-4o", inputTokens: 1, outputTokens: 1 };
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(i % 2 ? nodeA : nodeB, "POST", "/api/ledger/spend", { ...spend, costCents: i + 1 }),
      ),
    );
    const total = (40 * 41) / 2;
    for (const node of [nodeA, nodeB]) {
      expect(await call(node, "GET", `/api/ledger/check/${realmId}/${agentId}`)).toMatchObject({
        allowed: true,
        spentCents: total,
      });
    }
    expect(await call(nodeB, "GET", `/api/ledger/summary/${realmId}`)).toMatchObject({
      totalCents: total,
      eventCount: 40,
    });
  });

  it("counts a cost.incurred event once although every node's subscriber receives it", async () => {
    const other = (await call(nodeA, "POST", "/api/agents", { name: "counted-once", realmId })).id;
    await nodeA.engine.trigger({
      function_id: "publish",
      payload: {
        topic: "cost.incurred",
        data: {
          realmId,
          agentId: other,
          costCents: 7,
          provider: "openai",
          model: "gpt-4o",
          inputTokens: 10,
          outputTokens: 5,
          eventId: crypto.randomUUID(),
        },
      },
    });
    await eventually(async () => {
      const summary = await call(nodeB, "GET", `/api/ledger/summary/${realmId}?groupBy=agent`);
      expect(summary.breakdown[other]).toBe(7);
      return true;
    });
    await sleep(500);
    const summary = await call(nodeA, "GET", `/api/ledger/summary/${realmId}?groupBy=agent`);
    expect(summary.breakdown[other]).toBe(7);
  });

  it("lets exactly one of 20 checkouts made on both nodes take a mission", async () => {
    const mission = await call(nodeA, "POST", "/api/missions", {
      realmId,
      title: "shared backlog",
      createdBy: "ops",
    });
    const attempts = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? nodeA : nodeB).http.inject({
          method: "POST",
          url: `/api/missions/${realmId}/${mission.id}/checkout`,
          headers: { authorization: `Bearer ${CLUSTER_ADMIN_KEY}` },
          payload: { agentId: `worker-${i}` },
        }),
      ),
    );
    expect(attempts.filter((attempt) => attempt.statusCode === 200)).toHaveLength(1);
    expect(attempts.filter((attempt) => attempt.statusCode === 409)).toHaveLength(19);
    const winner = attempts.find((attempt) => attempt.statusCode === 200)?.json().assigneeId;
    const stored = await call(nodeB, "GET", `/api/missions/${realmId}/${mission.id}`);
    expect(stored).toMatchObject({ status: "active", assigneeId: winner, version: 2 });
  });

  it("schedules a pulse registered on one node on the others, so it keeps firing when that node stops", async () => {
    const sleeper = (await call(nodeA, "POST", "/api/agents", { name: "sleeper", realmId })).id;
    await call(nodeA, "POST", "/api/pulse/register", { realmId, agentId: sleeper, cron: "* * * * * *" });
    await eventually(async () => {
      const status = await call(nodeB, "GET", `/api/pulse/${realmId}/${sleeper}`);
      expect(status.recentRuns.length).toBeGreaterThan(0);
      expect(status.recentRuns[0].source).toBe("cron");
      return true;
    }, 10_000);
    await nodeA.close();
    const before = (await call(nodeB, "GET", `/api/pulse/${realmId}/${sleeper}?limit=100`)).recentRuns.length;
    await eventually(async () => {
      const after = (await call(nodeB, "GET", `/api/pulse/${realmId}/${sleeper}?limit=100`)).recentRuns
        .length;
      expect(after).toBeGreaterThan(before + 1);
      return true;
    }, 10_000);
    await call(nodeB, "PATCH", `/api/pulse/${realmId}/${sleeper}`, { enabled: false });
  });
});
