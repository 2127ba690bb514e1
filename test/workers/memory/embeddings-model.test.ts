import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spentBudget } from "../../helpers/control-plane.ts";
import type { FakeOpenAI } from "../../helpers/fake-openai.ts";
import type { TestServer } from "../../helpers/server.ts";
import {
  backends,
  embeddingRequests,
  eventually,
  fakeEnv,
  metric,
  newAgent,
  remember,
  send,
  startFake,
  status,
} from "./embedding-env.ts";

/** An agent's embedding model changing, and its budget refusing (issue #35), on SQLite and PostgreSQL. */
describe.each(backends)("memory embeddings: model changes and budgets ($name)", (backend) => {
  let fake: FakeOpenAI;
  let storage: Awaited<ReturnType<typeof backend.storage>>;
  let server: TestServer;

  beforeEach(async () => {
    fake = await startFake();
    storage = await backend.storage();
    server = await storage.start(fakeEnv(fake));
  });
  afterEach(async () => {
    await server.close();
    await storage.drop();
    await fake.close();
  });
  const settledOn = (agentId: string, model: string, entries: number) =>
    eventually(
      () => status(server, agentId),
      (now) => now.model === model && now.embedded === entries && now.pending === 0,
    );

  it("re-embeds an agent's memory in the background when a PATCH changes its embeddingModel", async () => {
    const agentId = await newAgent(server, "text-embedding-3-small");
    const contents = ["alpha memory", "beta memory", "gamma memory"];
    await remember(server, agentId, contents);
    await settledOn(agentId, "openai/text-embedding-3-small", 3);

    const patched = await send(server, "PATCH", `/api/agents/${agentId}`, {
      embeddingModel: "text-embedding-3-large",
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    // The agents worker's agent.lifecycle event starts it: nothing here asks for the status meanwhile.
    const largeVectors = () =>
      server.service.engine.trigger({
        function_id: "vector::count",
        payload: { index: "memory", scope: agentId, model: "openai/text-embedding-3-large" },
      }) as Promise<{ count: number }>;
    await eventually(largeVectors, ({ count }) => count === 3);
    expect(await settledOn(agentId, "openai/text-embedding-3-large", 3)).toMatchObject({ entries: 3 });
    const large = embeddingRequests(fake).filter((body) => body.model === "text-embedding-3-large");
    const embeddedTexts = large.flatMap((body) => [body.input].flat());
    for (const content of contents) expect(embeddedTexts).toContain(content);
    // Once the new model covers the memory, the old model's vectors are gone.
    const allVectors = () =>
      server.service.engine.trigger({
        function_id: "vector::count",
        payload: { index: "memory", scope: agentId },
      }) as Promise<{ count: number }>;
    await eventually(allVectors, ({ count }) => count === 3);
  });

  it("embeds the memories an agent had before it was given an embedding model", async () => {
    const agentId = await newAgent(server);
    await remember(server, agentId, ["older one", "older two"]);
    expect(await status(server, agentId)).toMatchObject({ model: null, entries: 2, pending: 0 });
    expect(embeddingRequests(fake)).toEqual([]);
    const patched = await send(server, "PATCH", `/api/agents/${agentId}`, {
      embeddingModel: "text-embedding-3-small",
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    await settledOn(agentId, "openai/text-embedding-3-small", 2);
  });

  it("backfills on request and reports progress until nothing is pending", async () => {
    const agentId = await newAgent(server, "text-embedding-3-small");
    await remember(server, agentId, ["to backfill"]);
    await settledOn(agentId, "openai/text-embedding-3-small", 1);
    const started = await send(server, "POST", `/api/agents/${agentId}/memory/embeddings`);
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ agentId, model: "openai/text-embedding-3-small", entries: 1 });
    await settledOn(agentId, "openai/text-embedding-3-small", 1);
    const missing = await send(server, "GET", "/api/agents/agent-nope/memory/embeddings");
    expect(missing.status).toBe(404);
  });

  it("makes no embedding call while the agent's budget refuses, and goes on once it is raised", async () => {
    const agentId = await newAgent(server, "text-embedding-3-small");
    const { realmId } = (await send(server, "GET", `/api/agents/${agentId}`)).body;
    await spentBudget(server, realmId, agentId);
    await remember(server, agentId, ["refused one", "refused two"]);
    const refused = await eventually(
      () => status(server, agentId),
      (now) => /budget/.test(now.lastError ?? ""),
    );
    expect(refused).toMatchObject({ entries: 2, embedded: 0, pending: 2 });
    expect(await metric(server, 'agentos_memory_embedding_failures_total{reason="refused"}')).toBeGreaterThan(
      0,
    );
    // A store tries again at once: the ledger still refuses, and the provider is never asked.
    await remember(server, agentId, ["refused three"]);
    await eventually(
      () => metric(server, 'agentos_memory_embedding_failures_total{reason="refused"}'),
      (count) => count >= 2,
    );
    expect(embeddingRequests(fake)).toEqual([]);

    const raised = await send(server, "POST", "/api/ledger/budget", {
      realmId,
      agentId,
      monthlyCents: 100_000,
      hardLimit: true,
    });
    expect(raised.status).toBe(200);
    await remember(server, agentId, ["allowed four"]);
    await settledOn(agentId, "openai/text-embedding-3-small", 4);
  });
});
