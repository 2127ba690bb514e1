import { Client } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentOS } from "../../src/app.ts";
import { findTestPostgres } from "../engine/state/contract.ts";
import { type Cluster, CLUSTER_ADMIN_KEY as KEY, startCluster } from "../helpers/cluster.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping the cluster cost test: ${found.reason}`);

function inject(node: AgentOS, method: "GET" | "POST", url: string, payload?: unknown) {
  return node.http.inject({
    method,
    url,
    payload: payload as object,
    headers: { authorization: `Bearer ${KEY}` },
  });
}

describe.skipIf(found.url === null)("costs in a cluster that loses its pub/sub listeners", () => {
  let cluster: Cluster;
  let fake: FakeOpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    cluster = await startCluster(found.url ?? "", 2, {
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: fake.baseUrl,
      AGENTOS_RATE_LIMITS: "off",
    });
  });
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
  });

  it("counts every model call exactly once while the listeners are cut mid-load", async () => {
    const [nodeA, nodeB] = cluster.nodes as [AgentOS, AgentOS];
    const created = await inject(nodeA, "POST", "/api/agents", { name: "costly", model: "gpt-4o" });
    expect(created.statusCode, created.body).toBe(201);
    const agentId = created.json().id as string;
    const before = fake.requests.length;

    let answered = 0;
    const send = async (i: number) => {
      const node = i % 2 === 0 ? nodeA : nodeB;
      const response = await inject(node, "POST", `/api/agents/${agentId}/message`, {
        message: `hello ${i}`,
      });
      expect(response.statusCode, response.body).toBe(200);
      answered++;
    };
    const lanes = Array.from({ length: 4 }, async (_, lane) => {
      for (let i = lane; i < 40; i += 4) {
        await send(i);
        // A quarter of the way in, cut every LISTEN connection of the database (both nodes').
        if (i === 10) await cutListeners(found.url ?? "");
      }
    });
    await Promise.all(lanes);
    const calls = fake.requests.length - before;
    expect(answered).toBe(40);
    expect(calls).toBe(40);

    // Taken before each answer went out and counted by the node that took it moments later: no waiting
    // on notifications, and once, not once per node. The schema is this test's own: every spend event of
    // realm-default is one of these calls.
    const summary = () =>
      inject(nodeB, "GET", "/api/ledger/summary/realm-default?groupBy=agent").then((r) => r.json());
    await expect.poll(async () => (await summary()).eventCount).toBe(calls);
    const pending = (await nodeA.engine.trigger({
      function_id: "state::list",
      payload: { scope: "ledger_pending" },
    })) as { items: unknown[] };
    expect(pending.items).toEqual([]);
    const counted = await summary();
    expect(counted.eventCount).toBe(calls);
    expect(counted.breakdown[agentId]).toBeCloseTo(counted.totalCents, 6);
  }, 60_000);
});

/** Terminates every backend that is LISTENing: both nodes lose their pub/sub listener at once. */
async function cutListeners(url: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()",
  );
  await client.end();
}
