import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentOS } from "../../../src/app.ts";
import { findTestPostgres } from "../../engine/state/contract.ts";
import { CLUSTER_ADMIN_KEY, type Cluster, startCluster } from "../../helpers/cluster.ts";
import type { FakeOpenAI } from "../../helpers/fake-openai.ts";
import { embeddingRequests, eventually, fakeEnv, startFake } from "./embedding-env.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping the embeddings cluster test: ${found.reason}`);

async function inject(node: AgentOS, method: "GET" | "POST" | "PATCH", url: string, payload?: object) {
  const response = await node.http.inject({
    method,
    url,
    ...(payload ? { payload } : {}),
    headers: { authorization: `Bearer ${CLUSTER_ADMIN_KEY}` },
  });
  return { status: response.statusCode, body: response.body ? response.json() : null };
}

/** Two nodes hear the same agent.lifecycle event: the re-embedding is done (and paid) once. */
describe.skipIf(found.url === null)("memory embeddings in a cluster", () => {
  let cluster: Cluster;
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFake();
    cluster = await startCluster(found.url ?? "", 2, { ...fakeEnv(fake), AGENTOS_RATE_LIMITS: "off" });
  });
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
  });

  it("re-embeds a changed model's memory once, whichever node takes the pass", async () => {
    const [a, b] = cluster.nodes as [AgentOS, AgentOS];
    const created = await inject(a, "POST", "/api/agents", {
      name: "clustered",
      model: "gpt-4o",
      embeddingModel: "text-embedding-3-small",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const agentId = created.body.id as string;
    const contents = Array.from({ length: 150 }, (_, i) => `clustered memory ${i}`);
    for (let i = 0; i < contents.length; i += 50) {
      await a.engine.trigger({
        function_id: "memory::store_many",
        payload: { agentId, entries: contents.slice(i, i + 50).map((content) => ({ content })) },
      });
    }
    const status = async (node: AgentOS) =>
      (await inject(node, "GET", `/api/agents/${agentId}/memory/embeddings`)).body;
    await eventually(
      () => status(b),
      (now) => now.embedded === 150 && now.pending === 0,
    );

    const patched = await inject(b, "PATCH", `/api/agents/${agentId}`, {
      embeddingModel: "text-embedding-3-large",
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    await eventually(
      () => status(a),
      (now) => now.model === "openai/text-embedding-3-large" && now.embedded === 150 && now.pending === 0,
    );
    const inputs = embeddingRequests(fake)
      .filter((body) => body.model === "text-embedding-3-large")
      .flatMap((body) => [body.input].flat());
    expect(inputs.filter((text) => text.startsWith("clustered memory")).sort()).toEqual([...contents].sort());
  });
});
