import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_LIFECYCLE_TOPIC } from "../../../src/shared/agent-events.ts";
import { call, createAgent, newRealm, recordTopic } from "../../helpers/control-plane.ts";
import {
  type JsonBody,
  startTestServer,
  type TestServer,
  UNUSED_PROVIDER_KEYS,
} from "../../helpers/server.ts";

// The test server has OpenAI and Anthropic keys (never used here) and none for Gemini.
let server: TestServer;
let events: JsonBody[];
beforeAll(async () => {
  // The operator names the local providers' addresses: they then serve every realm (nothing is called).
  server = await startTestServer({
    env: {
      ...UNUSED_PROVIDER_KEYS,
      OLLAMA_BASE_URL: "http://127.0.0.1:11434/v1",
      VLLM_BASE_URL: "http://127.0.0.1:8000/v1",
    },
  });
  events = recordTopic(server, AGENT_LIFECYCLE_TOPIC);
});
afterAll(async () => server.close());

const agent = async (id: string) => (await call(server, "GET", `/api/agents/${id}`)).body;

describe("an agent's embedding model", () => {
  it.each([
    ["text-embedding-3-small", "text-embedding-3-small"],
    ["nomic", "nomic-embed-text"],
    ["Embedding-Large", "text-embedding-3-large"],
    ["ollama/nomic-embed-text", "nomic-embed-text"],
    ["ollama/bge-m3", "ollama/bge-m3"],
    // Listed under Ollama, so the plain id would name Ollama's: vLLM's keeps its provider.
    ["vllm/nomic-embed-text", "vllm/nomic-embed-text"],
  ])("is taken on create as %s and stored as %s", async (given, stored) => {
    const id = await createAgent(server, await newRealm(server), { embeddingModel: given });
    expect((await agent(id)).embeddingModel).toBe(stored);
    // What is stored names the same model again (a PATCH with it is accepted and changes nothing).
    const again = await call(server, "PATCH", `/api/agents/${id}`, { embeddingModel: stored });
    expect(again.status).toBe(200);
    expect(again.body.embeddingModel).toBe(stored);
  });

  it("is absent without one, and null on create means none", async () => {
    const realmId = await newRealm(server);
    const plain = await agent(await createAgent(server, realmId));
    expect(plain).not.toHaveProperty("embeddingModel");
    const none = await agent(await createAgent(server, realmId, { embeddingModel: null }));
    expect(none).not.toHaveProperty("embeddingModel");
  });

  it("changes on PATCH and is removed by null, each change published on agent.lifecycle", async () => {
    const realmId = await newRealm(server);
    const id = await createAgent(server, realmId, { embeddingModel: "text-embedding-3-small" });
    await expect
      .poll(() => events.find((event) => event.agentId === id && event.type === "created"))
      .toEqual({ type: "created", agentId: id, realmId, embeddingModel: "text-embedding-3-small" });

    const changed = await call(server, "PATCH", `/api/agents/${id}`, { embeddingModel: "mxbai" });
    expect(changed.status).toBe(200);
    expect(changed.body.embeddingModel).toBe("mxbai-embed-large");
    expect((await agent(id)).embeddingModel).toBe("mxbai-embed-large");

    const cleared = await call(server, "PATCH", `/api/agents/${id}`, { embeddingModel: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).not.toHaveProperty("embeddingModel");
    expect(await agent(id)).not.toHaveProperty("embeddingModel");

    // A PATCH of other fields leaves it, and says what it changed.
    await call(server, "PATCH", `/api/agents/${id}`, { embeddingModel: "nomic" });
    await call(server, "PATCH", `/api/agents/${id}`, { description: "remembers" });
    expect((await agent(id)).embeddingModel).toBe("nomic-embed-text");

    const updates = () => events.filter((event) => event.agentId === id && event.type === "updated");
    await expect.poll(() => updates().length).toBe(4);
    expect(updates()).toEqual([
      {
        type: "updated",
        agentId: id,
        realmId,
        changed: ["embeddingModel"],
        embeddingModel: { from: "text-embedding-3-small", to: "mxbai-embed-large" },
      },
      {
        type: "updated",
        agentId: id,
        realmId,
        changed: ["embeddingModel"],
        embeddingModel: { from: "mxbai-embed-large", to: null },
      },
      {
        type: "updated",
        agentId: id,
        realmId,
        changed: ["embeddingModel"],
        embeddingModel: { from: null, to: "nomic-embed-text" },
      },
      { type: "updated", agentId: id, realmId, changed: ["description"] },
    ]);

    expect((await call(server, "DELETE", `/api/agents/${id}`)).status).toBe(204);
    await expect
      .poll(() => events.find((event) => event.agentId === id && event.type === "deleted"))
      .toEqual({ type: "deleted", agentId: id, realmId });
  });

  it.each([
    ["text-embedding-9", "is not an embedding model"],
    ["gpt-4o-mini", "is the chat model gpt-4o-mini, not an embedding model"],
    ["openai/gpt-4o-mini", "is the chat model gpt-4o-mini, not an embedding model"],
    ["anthropic/claude-embed", "does not offer OpenAI's /embeddings endpoint"],
    ["nowhere/some-model", "is not an embedding model"],
  ])("refuses %s with a 400 naming the field and the value, storing nothing", async (name, why) => {
    const realmId = await newRealm(server);
    const created = await call(server, "POST", "/api/agents", {
      name: "embedder",
      model: "gpt-4o",
      realmId,
      embeddingModel: name,
    });
    expect(created.status).toBe(400);
    expect(created.body.error).toContain(`embeddingModel: "${name}"`);
    expect(created.body.error).toContain(why);
    expect((await call(server, "GET", `/api/agents?realmId=${realmId}`)).body.agents).toEqual([]);

    const id = await createAgent(server, realmId, { embeddingModel: "nomic" });
    const before = await agent(id);
    const patched = await call(server, "PATCH", `/api/agents/${id}`, {
      embeddingModel: name,
      description: "not this either",
    });
    expect(patched.status).toBe(400);
    expect(patched.body.error).toContain(`embeddingModel: "${name}"`);
    expect(await agent(id)).toEqual(before);
  });

  it("refuses a model whose hosted provider has no key with a 422 saying which key to set", async () => {
    const response = await call(server, "POST", "/api/agents", {
      name: "gemini-memory",
      model: "gpt-4o",
      realmId: await newRealm(server),
      embeddingModel: "gemini-embedding",
    });
    expect(response.status).toBe(422);
    expect(response.body.error).toContain("embeddingModel: Model gemini-embedding-001 cannot be used yet");
    expect(response.body.error).toContain("GEMINI_API_KEY");
  });

  it("refuses an empty name and a non-string at the schema", async () => {
    const realmId = await newRealm(server);
    for (const embeddingModel of ["", "   ", 42]) {
      const response = await call(server, "POST", "/api/agents", {
        name: "blank",
        model: "gpt-4o",
        realmId,
        embeddingModel,
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toContain("embeddingModel");
    }
  });
});
