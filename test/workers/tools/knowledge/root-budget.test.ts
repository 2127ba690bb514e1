import { describe, expect, it } from "vitest";
import { spentBudget } from "../../../helpers/control-plane.ts";
import { until } from "../../../helpers/races.ts";
import { toolsServer } from "../setup.ts";
import { rootAndChild, spentByAgent } from "../trees.ts";

const env = toolsServer({ AGENTOS_EMBEDDING_MODEL: "text-embedding-3-small" });

const embeddingRequests = () => env.fake.requests.filter((request) => "embeddings" in request).length;

describe("a sub-agent's embeddings are paid by the root of its tree, as its turns are", () => {
  it("charges the root for its sub-agent's embeddings", async () => {
    const { root, asChild } = await rootAndChild(env, "librarian");
    const stored = await env.tool("tool::vector_store", { namespace: "n", text: "a fact" }, asChild);
    expect(stored).toMatchObject({ rankedBy: "vector" });
    const breakdown = await spentByAgent(env, root.realmId);
    expect(breakdown[root.agentId]).toBeGreaterThan(0);
    expect(breakdown[asChild.agentId]).toBeUndefined();
  });

  it("refuses its sub-agent's embedding with 402 once the root's own budget is spent, calling no provider", async () => {
    const { root, asChild } = await rootAndChild(env, "librarian");
    await spentBudget(env.server, root.realmId, root.agentId);
    const before = embeddingRequests();
    const refused = await env.failure("tool::vector_store", { namespace: "n", text: "another" }, asChild);
    expect(refused.status).toBe(402);
    expect(embeddingRequests()).toBe(before);
  });
});

describe("a sub-agent's memory embeddings are paid by the root of its tree", () => {
  it("charges the root, not the sub-agent, for embedding what the sub-agent remembers", async () => {
    const { root, asChild } = await rootAndChild(env, "librarian");
    const before = embeddingRequests();
    await env.tool("tool::memory_store", { content: "the launch code is in the blue drawer" }, asChild);
    // The memory worker embeds in the background: wait for its request, then for the ledger.
    await until(() => embeddingRequests() > before);
    let breakdown: Record<string, number> = {};
    for (let tries = 0; tries < 100 && !(breakdown[root.agentId] ?? 0); tries++) {
      breakdown = await spentByAgent(env, root.realmId);
      if (!breakdown[root.agentId]) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(breakdown[root.agentId]).toBeGreaterThan(0);
    expect(breakdown[asChild.agentId]).toBeUndefined();
  });
});
