import { describe, expect, it } from "vitest";
import { MAX_HELD_ENTRIES } from "../../../src/workers/memory/embedding-queue.ts";
import { backends, eventually, metric, newAgent, remember, serviceOn, status } from "./embedding-env.ts";

/**
 * The queue keeps the contents of the entries it is to embed in memory. While the provider is down (or
 * the realm's budget refuses), stores go on: without a bound, every one stored (32 KiB each at most) would
 * stay in the process until the provider answers again.
 */
describe.each(backends)("the embedding queue while the provider is down ($name)", (backend) => {
  const world = serviceOn(backend);

  it("holds a bounded number of entries, and embeds every one of them once the provider is back", async () => {
    const live = world.server();
    const fake = world.fake();
    const agentId = await newAgent(live, "text-embedding-3-small");
    fake.embeddingsDown(true);
    const total = Math.ceil((MAX_HELD_ENTRIES + 300) / 100) * 100;
    for (let at = 0; at < total; at += 100) {
      await remember(
        live,
        agentId,
        Array.from({ length: 100 }, (_, i) => `pending memory number ${at + i}`),
      );
    }
    // A flush has failed since the last store: its report says what is held.
    await eventually(
      () => status(live, agentId),
      (now) => now.lastError !== null,
    );
    await remember(live, agentId, ["one more"]);
    const failures = await metric(live, 'agentos_memory_embedding_failures_total{reason="error"}');
    await eventually(
      () => metric(live, 'agentos_memory_embedding_failures_total{reason="error"}'),
      (now) => now > failures,
    );
    expect(await metric(live, "agentos_memory_embeddings_pending")).toBeLessThanOrEqual(MAX_HELD_ENTRIES);

    fake.embeddingsDown(false);
    const settled = await eventually(
      () => status(live, agentId),
      (now) => now.pending === 0,
    );
    expect(settled).toMatchObject({ entries: total + 1, embedded: total + 1 });
  });
});
