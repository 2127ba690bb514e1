import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeBase64Vector } from "../../../src/llm/openai/embeddings.ts";
import { hashedEmbedding } from "../../helpers/hashed-embedder.ts";
import type { TestServer } from "../../helpers/server.ts";
import { backends, eventually, metric, newAgent, recall, remember, status } from "./embedding-env.ts";

/** What the provider refuses on its own: any request holding an input with this word is answered 400. */
const FORBIDDEN = "forbidden";

/**
 * An OpenAI-compatible embeddings host that refuses, as OpenAI does, the whole request (400, no word of
 * which input) when one input holds FORBIDDEN; or answers every request `outage` while it is set.
 */
function refusingProvider(inputs: string[][], outage: () => number | undefined): Server {
  return createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string; input: unknown };
    const texts = (Array.isArray(body.input) ? body.input : [body.input]).map(String);
    inputs.push(texts);
    const status = outage() ?? (texts.some((text) => text.includes(FORBIDDEN)) ? 400 : undefined);
    if (status) {
      res.writeHead(status, { "content-type": "application/json" });
      const message = status === 400 ? "'$.input' is invalid. Please check the API reference" : "down";
      res.end(JSON.stringify({ error: { message, type: "invalid_request_error", param: null } }));
      return;
    }
    const data = texts.map((text, index) => ({
      object: "embedding",
      index,
      embedding: encodeBase64Vector(Array.from(hashedEmbedding(text, 64))),
    }));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", data, model: body.model, usage: { prompt_tokens: 3 } }));
  });
}

describe.each(backends)("memory entries the embedding provider refuses ($name)", (backend) => {
  const inputs: string[][] = [];
  let outage: number | undefined;
  const provider = refusingProvider(inputs, () => outage);
  let storage: Awaited<ReturnType<typeof backend.storage>>;
  let live: TestServer;
  let env: Record<string, string>;
  const sent = (text: string) => inputs.filter((texts) => texts.includes(text)).length;

  beforeAll(async () => {
    await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
    const { port } = provider.address() as AddressInfo;
    env = { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` };
    storage = await backend.storage();
    live = await storage.start(env);
  });
  afterAll(async () => {
    await live?.close();
    await storage?.drop();
    await new Promise((resolve) => provider.close(resolve));
  });

  it("marks the one refused entry, embeds the agent's others, and never sends it again (also after a restart)", async () => {
    outage = undefined;
    const agentId = await newAgent(live, "text-embedding-3-small");
    const bad = `a ${FORBIDDEN} memory`;
    await remember(live, agentId, ["my car is red", bad, "the budget meeting moved to Friday"]);
    // Before, the batch failed whole at each retry: nothing of the agent was ever embedded.
    expect(
      await eventually(
        () => status(live, agentId),
        (now) => now.pending === 0,
      ),
    ).toMatchObject({ entries: 3, embedded: 2, refused: 1, pending: 0, lastError: null });
    const [best] = await recall(live, agentId, "red car", "vector");
    expect(best?.content).toBe("my car is red");
    expect(await metric(live, 'agentos_memory_embedding_failures_total{reason="rejected"}')).toBeGreaterThan(
      0,
    );

    const times = sent(bad);
    await remember(live, agentId, ["later: the cat is grey"]);
    await eventually(
      () => status(live, agentId),
      (now) => now.embedded === 3 && now.pending === 0,
    );
    // The refusal is kept with the vectors: a new process's pass over the memory skips it too.
    await live.close();
    live = await storage.start(env);
    await live.service.engine.trigger({ function_id: "memory::backfill", payload: { agentId } });
    expect(
      await eventually(
        () => status(live, agentId),
        (now) => now.pending === 0,
      ),
    ).toMatchObject({ entries: 4, embedded: 3, refused: 1, pending: 0 });
    expect(sent(bad)).toBe(times);
  });

  it.each([503, 401])(
    "marks nothing while the provider fails every request (HTTP %i); embeds all once it is back",
    async (status_) => {
      const agentId = await newAgent(live, "text-embedding-3-small");
      outage = status_;
      await remember(live, agentId, ["one memory", "another memory"]);
      const failing = await eventually(
        () => status(live, agentId),
        (now) => now.lastError !== null,
      );
      expect(failing).toMatchObject({ entries: 2, embedded: 0, refused: 0, pending: 2 });
      outage = undefined;
      await live.service.engine.trigger({ function_id: "memory::backfill", payload: { agentId } });
      expect(
        await eventually(
          () => status(live, agentId),
          (now) => now.pending === 0,
        ),
      ).toMatchObject({ entries: 2, embedded: 2, refused: 0 });
    },
  );

  it("marks nothing when the provider refuses the request itself (400 for any input)", async () => {
    const agentId = await newAgent(live, "text-embedding-3-small");
    outage = 400;
    await remember(live, agentId, ["one memory", "another memory"]);
    const failing = await eventually(
      () => status(live, agentId),
      (now) => now.lastError !== null,
    );
    expect(failing).toMatchObject({ entries: 2, embedded: 0, refused: 0, pending: 2 });
    expect(failing.lastError).toMatch("HTTP 400");
    outage = undefined;
    await live.service.engine.trigger({ function_id: "memory::backfill", payload: { agentId } });
    expect(
      await eventually(
        () => status(live, agentId),
        (now) => now.pending === 0,
      ),
    ).toMatchObject({ entries: 2, embedded: 2, refused: 0 });
  });
});
