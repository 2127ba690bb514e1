import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentOS } from "../../../src/app.ts";
import { findTestPostgres } from "../../engine/state/contract.ts";
import { CLUSTER_ADMIN_KEY, type Cluster, startCluster } from "../../helpers/cluster.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { eventually } from "../../helpers/iii.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping pulse cluster tests: ${found.reason}`);

async function call(node: AgentOS, method: "GET" | "POST", url: string, payload?: unknown) {
  const response = await node.http.inject({
    method,
    url,
    payload: payload as Record<string, unknown> | undefined,
    headers: { authorization: `Bearer ${CLUSTER_ADMIN_KEY}` },
  });
  return { status: response.statusCode, body: response.json() };
}

const expressionsOn = (node: AgentOS, agentId: string) =>
  node.engine.triggers
    .list()
    .filter(
      (t) =>
        t.function_id === "pulse::tick" &&
        (t.config as { data: { agentId: string } }).data.agentId === agentId,
    )
    .map((t) => (t.config as { expression: string }).expression);

describe.skipIf(found.url === null)("pulses in cluster mode (two nodes on one PostgreSQL)", () => {
  let cluster: Cluster;
  let fake: FakeOpenAI;
  let nodeA: AgentOS;
  let nodeB: AgentOS;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    cluster = await startCluster(found.url ?? "", 2, {
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: fake.baseUrl,
      AGENTOS_RATE_LIMITS: "off",
    });
    [nodeA, nodeB] = cluster.nodes as [AgentOS, AgentOS];
  });
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
  });

  it("a pulse registered on one node is scheduled on every node, follows changes and stops on purge", async () => {
    const realm = await call(nodeA, "POST", "/api/realms", { name: "cluster", owner: "tester" });
    expect(realm.status).toBe(201);
    const realmId = realm.body.id as string;
    const agent = await call(nodeA, "POST", "/api/agents", { name: "c", model: "gpt-4o", realmId });
    expect(agent.status).toBe(201);
    const agentId = agent.body.id as string;

    const first = await call(nodeA, "POST", "/api/pulse/register", { realmId, agentId, cron: "0 0 0 1 1 *" });
    expect(first.status).toBe(200);
    await eventually(() => expressionsOn(nodeB, agentId).join() === "0 0 0 1 1 *", 10_000);

    // Re-registered on the other node: both replace their trigger, neither adds one.
    expect(
      (await call(nodeB, "POST", "/api/pulse/register", { realmId, agentId, cron: "* * * * * *" })).status,
    ).toBe(200);
    await eventually(() => expressionsOn(nodeA, agentId).join() === "* * * * * *", 10_000);
    expect(expressionsOn(nodeB, agentId)).toEqual(["* * * * * *"]);

    const status = await eventually(async () => {
      const { body } = await call(nodeA, "GET", `/api/pulse/${realmId}/${agentId}`);
      return body.recentRuns?.filter((r: { status: string }) => r.status === "Completed").length >= 2
        ? body
        : null;
    }, 15_000);
    expect(status.recentRuns.every((r: { source: string }) => r.source === "cron")).toBe(true);

    await nodeA.engine.trigger({ function_id: "pulse::purge_realm", payload: { realmId } });
    await eventually(() => expressionsOn(nodeB, agentId).length === 0, 10_000);
    expect(expressionsOn(nodeA, agentId)).toEqual([]);
  }, 60_000);
});
