import { describe, expect, it } from "vitest";
import { toolsServer } from "./setup.ts";

const env = toolsServer();

describe("memory and collection tools", () => {
  it("stores facts by key, recalls them exactly and finds them by words", async () => {
    await env.agent();
    await env.tool("tool::memory_store", { content: "The deploy key lives in the vault", key: "deploy" });
    await env.tool("tool::memory_store", { content: "Lunch is at noon" });
    expect(await env.tool("tool::memory_recall", { key: "deploy" })).toMatchObject({
      content: "The deploy key lives in the vault",
    });
    expect((await env.failure("tool::memory_recall", { key: "nothing" })).status).toBe(404);
    const { results } = await env.tool<{ results: Array<{ content: string }> }>("tool::memory_search", {
      query: "deploy vault",
    });
    expect(results[0]?.content).toBe("The deploy key lives in the vault");
  });

  it("ranks a collection's documents by the full-text index, per namespace", async () => {
    await env.agent();
    await env.tool("tool::vector_store", {
      namespace: "docs",
      id: "a",
      text: "postgres replication and failover",
      metadata: { page: 1 },
    });
    await env.tool("tool::vector_store", { namespace: "docs", id: "b", text: "sqlite file locking" });
    await env.tool("tool::vector_store", { namespace: "other", id: "c", text: "postgres tuning" });
    const { results } = await env.tool<{ results: Array<{ id: string; metadata: unknown }> }>(
      "tool::vector_search",
      { namespace: "docs", query: "postgres failover" },
    );
    expect(results.map((r) => r.id)).toEqual(["a"]);
    expect(results[0]?.metadata).toEqual({ page: 1 });
    await env.tool("tool::vector_delete", { namespace: "docs", id: "a" });
    expect(
      (
        await env.tool<{ results: unknown[] }>("tool::vector_search", {
          namespace: "docs",
          query: "postgres",
        })
      ).results,
    ).toEqual([]);
    expect((await env.failure("tool::vector_delete", { namespace: "docs", id: "a" })).status).toBe(404);
  });
});
