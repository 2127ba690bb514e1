import { describe, expect, it } from "vitest";
import { agentPrincipal } from "../../../src/engine/acting-agent.ts";
import { backends, embeddingRequests, newAgent, send, serviceOn } from "../memory/embedding-env.ts";

/**
 * tool::vector_store|search|delete rank by real vectors for an agent with an embedding model (issue #35),
 * on SQLite and on PostgreSQL.
 */
describe.each(backends)("collection tools with an embedding model ($name)", (backend) => {
  const { fake, server } = serviceOn(backend);

  const asAgent = async (agentId: string) => {
    const { realmId } = (await send(server(), "GET", `/api/agents/${agentId}`)).body;
    return <T>(id: string, payload: Record<string, unknown>) =>
      server().service.engine.trigger({
        function_id: id,
        payload: { agentId, ...payload },
        auth: agentPrincipal({ id: agentId, realmId }),
      }) as Promise<T>;
  };
  type Found = {
    results: Array<{ id: string; text: string; metadata: unknown; score: number }>;
    rankedBy: string;
  };

  it("embeds documents, finds them by meaning, and deletes their vectors", async () => {
    const agentId = await newAgent(server(), "text-embedding-3-small");
    const tool = await asAgent(agentId);
    expect(
      await tool("tool::vector_store", {
        namespace: "facts",
        id: "car",
        text: "my car is red",
        metadata: { n: 1 },
      }),
    ).toEqual({ id: "car", namespace: "facts", rankedBy: "vector" });
    await tool("tool::vector_store", {
      namespace: "facts",
      id: "meeting",
      text: "the budget meeting is on Friday",
    });
    await tool("tool::vector_store", { namespace: "other", id: "elsewhere", text: "my automobile is blue" });
    expect(embeddingRequests(fake(), "my car is red")).toHaveLength(1);

    const found = await tool<Found>("tool::vector_search", {
      namespace: "facts",
      query: "what colour is my automobile?",
    });
    expect(found.rankedBy).toBe("vector");
    expect(found.results[0]).toMatchObject({ id: "car", text: "my car is red", metadata: { n: 1 } });
    expect(found.results[0]?.score).toBeGreaterThan(0.5);
    expect(found.results.map((hit) => hit.id)).not.toContain("elsewhere");

    await tool("tool::vector_delete", { namespace: "facts", id: "car" });
    const after = await tool<Found>("tool::vector_search", {
      namespace: "facts",
      query: "automobile colour",
    });
    expect(after.results.map((hit) => hit.id)).not.toContain("car");
  });

  it("ranks by words, and says so, when the provider fails at search time", async () => {
    const agentId = await newAgent(server(), "text-embedding-3-small");
    const tool = await asAgent(agentId);
    await tool("tool::vector_store", { namespace: "facts", id: "db", text: "postgres failover notes" });
    fake().embeddingsDown(true);
    try {
      const found = await tool<Found>("tool::vector_search", {
        namespace: "facts",
        query: "postgres failover",
      });
      expect(found).toMatchObject({ rankedBy: "text", results: [{ id: "db" }] });
    } finally {
      fake().embeddingsDown(false);
    }
  });

  it("ranks by words without an embedding model, and makes no embedding call", async () => {
    const agentId = await newAgent(server());
    const tool = await asAgent(agentId);
    expect(await tool("tool::vector_store", { namespace: "n", id: "a", text: "plain words here" })).toEqual({
      id: "a",
      namespace: "n",
      rankedBy: "text",
    });
    expect(await tool<Found>("tool::vector_search", { namespace: "n", query: "words" })).toMatchObject({
      rankedBy: "text",
      results: [{ id: "a" }],
    });
    expect(embeddingRequests(fake(), "plain words here")).toEqual([]);
  });
});
