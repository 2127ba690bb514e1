import { describe, expect, it } from "vitest";
import { toolsServer } from "../setup.ts";

const env = toolsServer();

const MAX_NOTES = 1000;
const MAX_COLLECTIONS = 100;
const MAX_DOCUMENTS = 10_000;

/** Nested `levels` deep: {a: {a: ... {}}}. */
const nested = (levels: number) => {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
};

/** The agent of the test running. */
let made = { agentId: "", realmId: "" };

/** How many documents the agent's collection holds, as its index counts them. */
const documents = async (namespace: string) =>
  (
    (await env.server.service.engine.trigger({
      function_id: "search::count",
      payload: { index: "tool_vectors", scope: `${made.agentId}\u0001${namespace}` },
    })) as { count: number }
  ).count;

/**
 * A steered model keeps what it stores through these tools for good: the metadata of a document, and
 * the number of notes, collections and documents, are bounded, each past its bound a 4xx naming it.
 */
describe("bounds of an agent's notes and collections", () => {
  it("refuses metadata over 16 KiB or nested deeper than 8 levels, hostile depth included", async () => {
    made = await env.agent();
    const store = (metadata: unknown) =>
      env.failure("tool::vector_store", { namespace: "docs", id: "m", text: "a page", metadata });
    const big = await store({ blob: "x".repeat(16 * 1024) });
    expect(big.status).toBe(400);
    expect(big.message).toContain("metadata must be at most 16384 bytes as JSON");
    for (const levels of [9, 100_000]) {
      const deep = await store(nested(levels));
      expect(deep.status).toBe(400);
      expect(deep.message).toContain("metadata must nest at most 8 levels");
    }
    expect(await documents("docs")).toBe(0);
    await env.tool("tool::vector_store", { namespace: "docs", id: "m", text: "a page", metadata: nested(8) });
    expect(await documents("docs")).toBe(1);
  });

  it(`refuses a collection past ${MAX_COLLECTIONS}, and still stores into those there are`, async () => {
    made = await env.agent();
    for (let i = 0; i < MAX_COLLECTIONS; i++) {
      await env.tool("tool::vector_store", { namespace: `c${i}`, text: "one document" });
    }
    const refused = await env.failure("tool::vector_store", { namespace: "one-more", text: "x" });
    expect(refused.status).toBe(409);
    expect(refused.message).toBe(
      `You have the most collections an agent may (${MAX_COLLECTIONS}): store into one of them`,
    );
    expect(await documents("one-more")).toBe(0);
    await env.tool("tool::vector_store", { namespace: "c0", text: "another document" });
    expect(await documents("c0")).toBe(2);
  });

  it(`refuses a document past ${MAX_DOCUMENTS} in a collection, and replaces one by its id`, async () => {
    made = await env.agent();
    const { agentId } = made;
    await env.tool("tool::vector_store", { namespace: "full", id: "first", text: "the first document" });
    // The rest written into the collection's index directly: ten thousand tool calls would take long.
    for (let start = 1; start < MAX_DOCUMENTS; start += 100) {
      await env.server.service.engine.trigger({
        function_id: "search::put_many",
        payload: {
          index: "tool_vectors",
          scope: `${agentId}\u0001full`,
          docs: Array.from({ length: Math.min(100, MAX_DOCUMENTS - start) }, (_, i) => ({
            id: `doc-${start + i}`,
            text: "filler",
            data: { id: `doc-${start + i}`, text: "filler", metadata: null },
          })),
        },
      });
    }
    expect(await documents("full")).toBe(MAX_DOCUMENTS);
    const refused = await env.failure("tool::vector_store", { namespace: "full", text: "one more" });
    expect(refused.status).toBe(409);
    expect(refused.message).toBe(
      `Collection full holds the most documents a collection may (${MAX_DOCUMENTS}): delete some first (tool::vector_delete)`,
    );
    await env.tool("tool::vector_store", { namespace: "full", id: "first", text: "the first, replaced" });
    expect(await documents("full")).toBe(MAX_DOCUMENTS);
    await env.tool("tool::vector_delete", { namespace: "full", id: "first" });
    await env.tool("tool::vector_store", { namespace: "full", text: "room again" });
    expect(await documents("full")).toBe(MAX_DOCUMENTS);
  });

  it(`refuses a keyed note past ${MAX_NOTES}, and replaces one under a key used before`, async () => {
    made = await env.agent();
    for (let start = 0; start < MAX_NOTES; start += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          env.tool("tool::memory_store", { content: `fact ${start + i}`, key: `k${start + i}` }),
        ),
      );
    }
    const refused = await env.failure("tool::memory_store", { content: "one more", key: "new" });
    expect(refused.status).toBe(409);
    expect(refused.message).toBe(
      `You hold the most keyed notes an agent may (${MAX_NOTES}): store under a key you used before`,
    );
    expect((await env.failure("tool::memory_recall", { key: "new" })).status).toBe(404);
    await env.tool("tool::memory_store", { content: "fact 0, replaced", key: "k0" });
    expect(await env.tool("tool::memory_recall", { key: "k0" })).toMatchObject({
      content: "fact 0, replaced",
    });
  });
});
