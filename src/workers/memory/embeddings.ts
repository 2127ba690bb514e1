import type { SearchClient } from "../../engine/search/client.ts";
import { type StateClient, stateClient } from "../../engine/state/client.ts";
import { report } from "../../engine/telemetry.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { type VectorClient, vectorClient } from "../../engine/vector/client.ts";
import { nowMs } from "../../shared/clock.ts";
import { isFunctionNotFound } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import { AgentEmbeddings } from "./agent-embedding.ts";
import { dirtyAgents, dropMark, markDirty } from "./embedding-marks.ts";
import { EmbeddingQueue, type QueueOptions } from "./embedding-queue.ts";
import { MEMORY_INDEX } from "./schema.ts";

export interface MemoryEmbeddings {
  state: StateClient;
  vectors: VectorClient;
  targets: AgentEmbeddings;
  queue: EmbeddingQueue;
  /** Entries just written to the text index: marked and queued when the agent has an embedding model. */
  stored(agentId: string, entries: ReadonlyArray<{ id: string; content: string }>): Promise<void>;
  /** One entry forgotten: its vectors (every model) go too. */
  removed(agentId: string, id: string): Promise<void>;
  /** The agent's memory forgotten: its vectors, pending work and mark go too. */
  forgotten(agentId: string): Promise<void>;
  /** The agent's embedding model may have changed: look again (a new one re-embeds its memory). */
  changed(agentId: string): void;
  /**
   * Takes up the agents left dirty: by a previous process (at start), or by one that stopped or crashed
   * since, another process's stores (a CLI's), a node gone in a cluster (the periodic sweep) — each
   * unless this process is at work on it already.
   */
  resume(sweep?: boolean): Promise<number>;
}

/** The sweep takes up a dirty agent once nothing has touched its mark for this long. */
const SWEEP_QUIET_MS = 60_000;

/** Vectors are optional to the memory worker: without the vector functions, memory is text only. */
const unlessMissing = (error: unknown) => {
  if (!isFunctionNotFound(error)) throw error;
};

/** Wires the memory worker's embeddings: the agents' models, the durable marks and the queue. */
export function memoryEmbeddings(
  trigger: TriggerFn,
  search: SearchClient,
  options: { env: NodeJS.ProcessEnv; logger: Logger; queue?: Partial<QueueOptions> },
): MemoryEmbeddings {
  const state = stateClient(trigger);
  const vectors = vectorClient(trigger);
  const targets = new AgentEmbeddings(trigger, options.env);
  const queue = new EmbeddingQueue(
    { trigger, env: options.env, state, search, vectors, targets },
    {
      logger: options.logger,
      report: (counts) => report(trigger, { type: "memory_embedding", ...counts }),
      ...options.queue,
    },
  );
  const { logger } = options;

  return {
    state,
    vectors,
    targets,
    queue,
    async stored(agentId, entries) {
      // Never fails the store: the entries are in the text index; at worst they wait for a backfill.
      try {
        const target = await targets.of(agentId);
        if (!target) return;
        const { newModel } = await markDirty(state, agentId, target.key);
        queue.stored(agentId, entries);
        if (newModel) queue.wake(agentId);
      } catch (error) {
        logger.warn({ agentId, err: (error as Error).message }, "memory entries not queued for embedding");
      }
    },
    async removed(agentId, id) {
      queue.removed(agentId, id);
      await vectors.delete(MEMORY_INDEX, agentId, id).catch(unlessMissing);
    },
    async forgotten(agentId) {
      queue.forget(agentId);
      targets.forget(agentId);
      await vectors.deleteScope(MEMORY_INDEX, agentId).catch(unlessMissing);
      await dropMark(state, agentId);
    },
    changed(agentId) {
      targets.forget(agentId);
      queue.wake(agentId);
    },
    async resume(sweep = false) {
      const agents = await dirtyAgents(state, sweep ? { ms: SWEEP_QUIET_MS, now: nowMs() } : undefined);
      for (const agentId of agents) queue.wake(agentId, true);
      return agents.length;
    },
  };
}
