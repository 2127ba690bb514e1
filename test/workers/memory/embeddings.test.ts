import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FakeOpenAI } from "../../helpers/fake-openai.ts";
import type { TestServer } from "../../helpers/server.ts";
import {
  backends,
  embeddingRequests,
  eventually,
  fakeEnv,
  metric,
  newAgent,
  recall,
  remember,
  send,
  startFake,
  status,
} from "./embedding-env.ts";

/**
 * Memory recalled by meaning (issue #35), end to end: a real service, an agent with an embedding model
 * on a fake OpenAI whose vectors are hashed bags of words (with a small lexicon: "car" ~ "automobile",
 * "red" ~ "colour"), on SQLite and on PostgreSQL.
 */
describe.each(backends)("memory embeddings ($name)", (backend) => {
  let fake: FakeOpenAI;
  let storage: Awaited<ReturnType<typeof backend.storage>>;
  let server: TestServer | undefined;

  beforeEach(async () => {
    fake = await startFake();
    storage = await backend.storage();
    server = await storage.start(fakeEnv(fake));
  });
  afterEach(async () => {
    await server?.close();
    await storage.drop();
    await fake.close();
  });
  const live = () => server as TestServer;
  const settled = (agentId: string) =>
    eventually(
      () => status(live(), agentId),
      (now) => now.entries > 0 && now.pending === 0,
    );

  it("finds a paraphrase that shares no word only by its vector, and says how each result matched", async () => {
    const agentId = await newAgent(live(), "text-embedding-3-small");
    await remember(live(), agentId, ["my car is red", "The quarterly budget meeting moved to Friday"]);
    expect(await settled(agentId)).toMatchObject({
      agentId,
      model: "openai/text-embedding-3-small",
      entries: 2,
      embedded: 2,
      pending: 0,
      lastError: null,
    });
    const question = "what colour is my automobile?";
    expect(await recall(live(), agentId, question, "text")).toEqual([]);
    const [best] = await recall(live(), agentId, question);
    expect(best).toMatchObject({ content: "my car is red", matchedBy: ["vector"] });
    expect(best?.score).toBeGreaterThan(0.5);
    expect((await recall(live(), agentId, question, "vector"))[0]?.content).toBe("my car is red");
    // A question sharing words is found by both.
    const both = await recall(live(), agentId, "budget meeting on Friday");
    expect(both[0]).toMatchObject({ matchedBy: ["text", "vector"] });
    expect(await metric(live(), "agentos_memory_embeddings_total")).toBeGreaterThanOrEqual(2);

    // Without an embedding model: text only, and no vector recall (a 400 naming mode).
    const plain = await newAgent(live());
    await remember(live(), plain, ["my car is red"]);
    expect(await status(live(), plain)).toMatchObject({ model: null, entries: 1, pending: 0 });
    expect((await recall(live(), plain, "red car"))[0]).toMatchObject({ matchedBy: ["text"] });
    const refused = await send(live(), "POST", `/api/agents/${plain}/memory`, {
      query: "car",
      mode: "vector",
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/^mode: "vector" needs an embedding model, and agent \S+ has none/);
    expect(embeddingRequests(fake).filter((body) => [body.input].flat().includes("red car"))).toEqual([]);
  });

  it("embeds a large store in batches of 64, one request each", async () => {
    const agentId = await newAgent(live(), "text-embedding-3-small");
    const contents = Array.from({ length: 100 }, (_, i) => `batched memory number ${i}`);
    await remember(live(), agentId, contents);
    expect(await settled(agentId)).toMatchObject({ entries: 100, embedded: 100 });
    const sizes = embeddingRequests(fake)
      .filter((body) => [body.input].flat().some((text) => text.startsWith("batched memory")))
      .map((body) => [body.input].flat().length);
    expect(sizes).toEqual([64, 36]);
  });

  it("deletes vectors with their memories", async () => {
    const agentId = await newAgent(live(), "text-embedding-3-small");
    await remember(live(), agentId, ["my car is red", "my bike is blue"]);
    await settled(agentId);
    const { body } = await send(live(), "GET", `/api/agents/${agentId}/memory`);
    const car = body.memories.find((entry: { content: string }) => entry.content === "my car is red");
    expect((await send(live(), "DELETE", `/api/agents/${agentId}/memory/${car.id}`)).status).toBe(204);
    expect(await status(live(), agentId)).toMatchObject({ entries: 1, embedded: 1, pending: 0 });
    const vectors = (id: string) =>
      live().service.engine.trigger({
        function_id: "vector::count",
        payload: { index: "memory", scope: id },
      }) as Promise<{ count: number }>;
    expect(await vectors(agentId)).toEqual({ count: 1, refused: 0 });
    expect((await send(live(), "DELETE", `/api/agents/${agentId}/memory`)).status).toBe(200);
    expect(await vectors(agentId)).toEqual({ count: 0, refused: 0 });
  });

  it("answers turns and recalls by text while the provider is down, and catches up once it is back", async () => {
    const agentId = await newAgent(live(), "text-embedding-3-small");
    fake.embeddingsDown(true);
    const turn = await send(live(), "POST", `/api/agents/${agentId}/message`, { message: "My car is red" });
    expect(turn.status, JSON.stringify(turn.body)).toBe(200);
    expect(turn.body.content).toBe("ok");
    // The queue tried, failed, and keeps the entries pending; recall falls back to words.
    const stalled = await eventually(
      () => status(live(), agentId),
      (now) => now.lastError !== null,
    );
    expect(stalled).toMatchObject({ entries: 2, embedded: 0, pending: 2 });
    expect(await metric(live(), 'agentos_memory_embedding_failures_total{reason="error"}')).toBeGreaterThan(
      0,
    );
    await eventually(
      () => metric(live(), "agentos_memory_embeddings_pending"),
      (pending) => pending === 2,
    );
    const byText = await recall(live(), agentId, "red car");
    expect(byText.map((hit) => hit.content)).toContain("My car is red");
    expect(byText.every((hit) => hit.matchedBy.join() === "text")).toBe(true);
    // A second turn still answers, without waiting on the provider.
    const again = await send(live(), "POST", `/api/agents/${agentId}/message`, {
      message: "what colour is my automobile?",
      sessionId: turn.body.sessionId,
    });
    expect(again.status).toBe(200);

    fake.embeddingsDown(false);
    expect(await settled(agentId)).toMatchObject({ entries: 4, embedded: 4, pending: 0, lastError: null });
    const meaning = await recall(live(), agentId, "which colour is the automobile", "vector");
    expect(meaning.map((hit) => hit.content)).toContain("My car is red");
    await eventually(
      () => metric(live(), "agentos_memory_embeddings_pending"),
      (pending) => pending === 0,
    );
    // A provider that does not answer at all: recall waits its short deadline, then answers by words.
    fake.embeddingReply({ hang: true });
    const slow = await recall(live(), agentId, "which colour is the automobile");
    expect(slow.map((hit) => hit.content)).toContain("what colour is my automobile?");
    expect(slow.every((hit) => hit.matchedBy.join() === "text")).toBe(true);
  });

  it("embeds after a restart what was pending when the service stopped", async () => {
    const agentId = await newAgent(live(), "text-embedding-3-small");
    fake.embeddingsDown(true);
    await remember(live(), agentId, ["pending one", "pending two", "pending three"]);
    await eventually(
      () => status(live(), agentId),
      (now) => now.lastError !== null,
    );
    await live().close();
    server = undefined;
    fake.embeddingsDown(false);
    const before = embeddingRequests(fake).length;
    server = await storage.start(fakeEnv(fake));
    expect(await settled(agentId)).toMatchObject({ entries: 3, embedded: 3, pending: 0 });
    expect(embeddingRequests(fake).length).toBeGreaterThan(before);
  });
});
