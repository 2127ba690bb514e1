import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newRealm, realmKey } from "../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * A local provider at its catalog address (ollama on 127.0.0.1:11434, vLLM on :8000, LM Studio on :1234)
 * is the operator's: a realm's keys and agents may not make the service post there until the operator
 * names the address.
 */
describe("local providers and realms", () => {
  let ollama: FakeOpenAI;
  let named: TestServer;
  let realmId: string;
  let key: string;
  let agentId: string;
  const dataDir = mkdtempSync(join(tmpdir(), "agentos-local-"));

  beforeAll(async () => {
    ollama = await startFakeOpenAI();
    named = await startTestServer({ env: { OLLAMA_BASE_URL: ollama.baseUrl } }, { dataDir });
    realmId = await newRealm(named);
    key = await realmKey(named, realmId);
    const made = await call(named, "POST", "/api/agents", {
      name: "on-premises",
      model: "ollama/m:7b",
      realmId,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    agentId = made.body.id;
  });
  afterAll(async () => {
    await named?.close();
    await ollama?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("serves every realm once the operator named the address (<ID>_BASE_URL)", async () => {
    const completion = await call(
      named,
      "POST",
      "/v1/chat/completions",
      { model: "ollama/m:7b", messages: [{ role: "user", content: "hi" }] },
      key,
    );
    expect(completion.status, JSON.stringify(completion.body)).toBe(200);
    const answered = await call(named, "POST", `/api/agents/${agentId}/message`, { message: "hi" }, key);
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const { body } = await call(named, "GET", "/api/providers");
    const listed = body.providers.find((provider: { id: string }) => provider.id === "ollama");
    expect(listed.openToRealms).toBe(true);
  });

  it("refuses another realm at the catalog's own address: completions, embeddings, agents (403/422 naming what to set)", async () => {
    // The same data, the operator's variable gone: the realm's agent and key now meet the catalog's address.
    await named.close();
    const unnamed = await startTestServer({ env: {} }, { dataDir });
    named = unnamed;
    const requestsBefore = ollama.requests.length;

    const completion = await call(
      unnamed,
      "POST",
      "/v1/chat/completions",
      { model: "ollama/m:7b", messages: [{ role: "user", content: "hi" }] },
      key,
    );
    expect(completion.status).toBe(403);
    expect(completion.body.error.message).toContain("OLLAMA_BASE_URL");

    const embeddings = await call(
      unnamed,
      "POST",
      "/v1/embeddings",
      { model: "ollama/nomic-embed-text", input: "hi" },
      key,
    );
    expect(embeddings.status).toBe(403);

    const answered = await call(unnamed, "POST", `/api/agents/${agentId}/message`, { message: "hi" }, key);
    expect(answered.status).toBe(403);
    expect(answered.body.error).toContain("OLLAMA_BASE_URL");

    const made = await call(unnamed, "POST", "/api/agents", { name: "another", model: "vllm/x", realmId });
    expect(made.status).toBe(422);
    expect(made.body.error).toContain("VLLM_BASE_URL");
    const patched = await call(unnamed, "PATCH", `/api/agents/${agentId}`, {
      fallbackModels: ["lmstudio/y"],
    });
    expect(patched.status).toBe(422);
    expect(ollama.requests.length).toBe(requestsBefore);

    const { body } = await call(unnamed, "GET", "/api/providers");
    const listed = body.providers.find((provider: { id: string }) => provider.id === "ollama");
    expect(listed.openToRealms).toBe(false);
  });

  it("counts the operator's AGENTOS_EMBEDDING_MODEL on a local provider as naming its address", async () => {
    const server = await startTestServer({ env: { AGENTOS_EMBEDDING_MODEL: "ollama/nomic-embed-text" } });
    try {
      const { body } = await call(server, "GET", "/api/providers");
      const byId = new Map(body.providers.map((provider: { id: string }) => [provider.id, provider]));
      expect(byId.get("ollama")).toMatchObject({ openToRealms: true });
      expect(byId.get("vllm")).toMatchObject({ openToRealms: false });
    } finally {
      await server.close();
    }
  });

  it("still serves the default realm (the operator's own) at the catalog's address", async () => {
    const made = await call(named, "POST", "/api/agents", { name: "operators", model: "ollama/m:7b" });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const completion = await call(named, "POST", "/v1/chat/completions", {
      model: "ollama/m:7b",
      messages: [{ role: "user", content: "hi" }],
    });
    // Past the realm check: the request goes out (nothing may listen at the catalog's address here).
    expect(completion.status).not.toBe(403);
  });
});
