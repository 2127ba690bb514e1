import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TriggerFn } from "../../../src/engine/types.ts";
import { resolveEmbeddingChoice } from "../../../src/llm/embeddings/choice.ts";
import { embed } from "../../../src/llm/embeddings/embed.ts";
import { createRealm, spentBudget } from "../../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { fakeTokenCount, hashedEmbedding } from "../../helpers/hashed-embedder.ts";
import { json, startTestServer, type TestServer } from "../../helpers/server.ts";

/**
 * `embed` in the real service: the model from the catalog (`catalog::resolve_embedding`), OpenAI's key
 * only in the vault, its base URL pointed at a fake; the realm's ledger charged as for a completion.
 */
let fake: FakeOpenAI;
let server: TestServer;
/** The service's environment (the provider layer reads the key's absence and the base URL from it). */
let SERVICE_ENV: NodeJS.ProcessEnv;
let trigger: TriggerFn;
beforeAll(async () => {
  fake = await startFakeOpenAI({ embeddings: "words", dimensions: 64 });
  SERVICE_ENV = { OPENAI_BASE_URL: fake.baseUrl };
  server = await startTestServer({ env: SERVICE_ENV });
  trigger = (request) => server.service.engine.trigger(request);
  await trigger({
    function_id: "vault::set",
    payload: { key: "provider:openai:api_key", value: "sk-vault" },
  });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

const embeddingRequests = () =>
  fake.requests.filter((request) => "embeddings" in request) as Array<{ authorization?: string }>;

describe("embed in the service", () => {
  it("resolves the service default, sends the vault's key, and charges the realm's ledger", async () => {
    const realmId = (await createRealm(server)).id as string;
    const choice = await resolveEmbeddingChoice(trigger);
    expect(choice.model).toMatchObject({ id: "text-embedding-3-small", dimensions: 1536, inputPrice: 0.02 });
    const texts = ["the budget meeting moved to friday", "lunch with the new hire", "deploy the fix"];
    const result = await embed({
      choice,
      texts,
      trigger,
      env: SERVICE_ENV,
      account: { realmId, agentId: "agent-embedder" },
      dimensions: 64,
    });
    expect(result.vectors).toEqual(texts.map((text) => hashedEmbedding(text, 64)));
    expect(embeddingRequests().at(-1)?.authorization).toBe("Bearer sk-vault");
    const tokens = texts.reduce((sum, text) => sum + fakeTokenCount(text), 0);
    const summary = await json(await server.request(`/api/ledger/summary/${realmId}?groupBy=model`));
    expect(summary.breakdown["text-embedding-3-small"]).toBeCloseTo(((tokens * 0.02) / 1e6) * 100, 9);
    const byAgent = await json(await server.request(`/api/ledger/summary/${realmId}?groupBy=agent`));
    expect(Object.keys(byAgent.breakdown)).toEqual(["agent-embedder"]);
  });

  it("makes no request for a realm whose hard budget is spent", async () => {
    const realmId = (await createRealm(server)).id as string;
    await spentBudget(server, realmId);
    const before = embeddingRequests().length;
    await expect(
      embed({
        choice: await resolveEmbeddingChoice(trigger, "embedding-large"),
        texts: ["anything"],
        trigger,
        env: SERVICE_ENV,
        account: { realmId, agentId: "agent-embedder" },
      }),
    ).rejects.toMatchObject({ status: 402, code: "budget_exceeded" });
    expect(embeddingRequests()).toHaveLength(before);
  });

  it("lists the embedding models over HTTP", async () => {
    const response = await server.request("/api/models/embeddings?provider=ollama");
    expect(response.status).toBe(200);
    const models = (await json(response)) as unknown as Array<{ id: string; dimensions: number }>;
    expect(models.map((model) => [model.id, model.dimensions])).toEqual([
      ["nomic-embed-text", 768],
      ["mxbai-embed-large", 1024],
    ]);
  });
});
