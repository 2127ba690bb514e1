import type { SearchClient } from "../../engine/search/client.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { VectorClient } from "../../engine/vector/client.ts";
import type { AgentEmbeddings } from "./agent-embedding.ts";
import { markDirty, readMark } from "./embedding-marks.ts";
import type { EmbeddingQueue } from "./embedding-queue.ts";
import { type EmbeddingStatus, MEMORY_INDEX } from "./schema.ts";

export interface StatusDeps {
  state: StateClient;
  search: SearchClient;
  vectors: VectorClient;
  targets: AgentEmbeddings;
  queue: EmbeddingQueue;
}

/**
 * How far an agent's memory is embedded with its model as the agent says now: entries, those with a
 * vector, those the provider refused, those pending (the CLI's progress bar). A model other than the one the memory was embedded
 * with starts its re-embedding, should no store or event have started it yet.
 */
export async function embeddingStatusOf(deps: StatusDeps, agentId: string): Promise<EmbeddingStatus> {
  const [target, entries] = await Promise.all([
    deps.targets.fresh(agentId),
    deps.search.count(MEMORY_INDEX, agentId),
  ]);
  const { lastError } = deps.queue.state(agentId);
  if (!target) {
    return { agentId, model: null, entries, embedded: 0, refused: 0, pending: 0, lastError: null };
  }
  const counts = await deps.vectors.counts(MEMORY_INDEX, agentId, target.key);
  const embedded = Math.min(entries, counts.count);
  // A refusal may outlive its entry for a moment (deleted while it was marked): never more than are left.
  const refused = Math.min(entries - embedded, counts.refused);
  if (embedded + refused < entries) {
    const mark = await readMark(deps.state, agentId);
    if (mark && mark.model !== target.key) deps.queue.wake(agentId);
  }
  const pending = entries - embedded - refused;
  // With nothing pending an earlier failure is history (the batch that caught up may not have said so yet).
  return {
    agentId,
    model: target.key,
    entries,
    embedded,
    refused,
    pending,
    lastError: pending === 0 ? null : lastError,
  };
}

/** Embeds whatever of the agent's memory has no vector yet (existing memories, a stalled queue). */
export async function backfill(deps: StatusDeps, agentId: string): Promise<EmbeddingStatus> {
  const target = await deps.targets.fresh(agentId);
  if (target) {
    await markDirty(deps.state, agentId, target.key);
    deps.queue.wake(agentId);
  }
  return embeddingStatusOf(deps, agentId);
}
