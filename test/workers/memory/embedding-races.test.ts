import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encodeBase64Vector } from "../../../src/llm/openai/embeddings.ts";
import { hashedEmbedding } from "../../helpers/hashed-embedder.ts";
import type { TestServer } from "../../helpers/server.ts";
import { backends, eventually, metric, newAgent, remember, send } from "./embedding-env.ts";

/**
 * An embeddings host that holds each request whose inputs include `held` until `release` is called:
 * a provider slow enough for a delete to come while the queue waits on it.
 */
function slowProvider(held: string) {
  let arrived: () => void = () => {};
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string; input: unknown };
    const inputs = (Array.isArray(body.input) ? body.input : [body.input]).map(String);
    if (inputs.includes(held)) {
      arrived();
      await released;
    }
    const data = inputs.map((text, index) => ({
      object: "embedding",
      index,
      embedding: encodeBase64Vector(hashedEmbedding(text, 64)),
    }));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", data, model: body.model, usage: { prompt_tokens: 3 } }));
  });
  return { server, arrival, release };
}

describe.each(backends)("memory deleted while its embedding is in flight ($name)", (backend) => {
  const HELD = "a memory whose embedding is slow";
  let provider: ReturnType<typeof slowProvider>;
  let storage: Awaited<ReturnType<typeof backend.storage>>;
  let live: TestServer;

  beforeEach(async () => {
    provider = slowProvider(HELD);
    await new Promise<void>((resolve) => provider.server.listen(0, "127.0.0.1", resolve));
    const { port } = provider.server.address() as AddressInfo;
    storage = await backend.storage();
    live = await storage.start({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` });
  });
  afterEach(async () => {
    provider.release();
    await live?.close();
    await storage?.drop();
    await new Promise((resolve) => provider.server.close(resolve));
  });

  const vectorCount = async (agentId: string) =>
    (
      (await live.service.engine.trigger({
        function_id: "vector::count",
        payload: { index: "memory", scope: agentId },
      })) as { count: number }
    ).count;

  /** Stores the held memory, waits for its embedding request, runs `remove`, then lets the provider answer. */
  async function deleteWhileEmbedding(agentId: string, remove: () => Promise<void>) {
    await remember(live, agentId, [HELD]);
    await provider.arrival;
    const before = await metric(live, "agentos_memory_embeddings_total");
    await remove();
    provider.release();
    // The batch is done once its vectors are counted as embedded (they were paid for either way).
    await eventually(
      () => metric(live, "agentos_memory_embeddings_total"),
      (total) => total > before,
    );
  }

  it("leaves no vector of a memory forgotten while it was being embedded", async () => {
    const agentId = await newAgent(live, "text-embedding-3-small");
    await deleteWhileEmbedding(agentId, async () => {
      const { body } = await send(live, "GET", `/api/agents/${agentId}/memory`);
      const [entry] = body.memories as Array<{ id: string }>;
      expect((await send(live, "DELETE", `/api/agents/${agentId}/memory/${entry?.id}`)).status).toBe(204);
    });
    expect(await vectorCount(agentId)).toBe(0);
    // Nor does a stray vector count as the embedding of another entry.
    await remember(live, agentId, ["another memory"]);
    const status = await eventually(
      () => send(live, "GET", `/api/agents/${agentId}/memory/embeddings`),
      ({ body }) => body.pending === 0,
    );
    expect(status.body).toMatchObject({ entries: 1, embedded: 1 });
    expect(await vectorCount(agentId)).toBe(1);
  });

  it("leaves no vector of an agent deleted while its memory was being embedded", async () => {
    const agentId = await newAgent(live, "text-embedding-3-small");
    await deleteWhileEmbedding(agentId, async () => {
      const deleted = await send(live, "DELETE", `/api/agents/${agentId}`);
      expect(deleted.status, JSON.stringify(deleted.body)).toBeLessThan(300);
    });
    expect(await vectorCount(agentId)).toBe(0);
  });
});
