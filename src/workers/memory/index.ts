import { z } from "zod";
import { ACTS_FOR_AGENT } from "../../engine/acting-agent.ts";
import { searchClient } from "../../engine/search/client.ts";
import type { InvocationContext } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { requireAdmin } from "../../shared/access.ts";
import { AGENT_LIFECYCLE_TOPIC } from "../../shared/agent-events.ts";
import { nowIso } from "../../shared/clock.ts";
import { notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { DEFAULT_MEMORY_MAX_ENTRIES_PER_AGENT } from "../../shared/limits.ts";
import { type Logger, silentLogger } from "../../shared/logger.ts";
import { recheckRealm } from "../../shared/realm-refs.ts";
import { assertMemoryAccess, remainingAgentRealm } from "./access.ts";
import type { QueueOptions } from "./embedding-queue.ts";
import { backfill, embeddingStatusOf } from "./embedding-status.ts";
import { memoryEmbeddings } from "./embeddings.ts";
import { EntryCap } from "./entry-cap.ts";
import { recallMemories } from "./recall.ts";
import {
  agentLifecycleMessage,
  embeddingStatus,
  MEMORY_INDEX,
  type MemoryEntry,
  memoryAgentInput,
  memoryDeleteInput,
  memoryEntries,
  memoryEntry,
  memoryForgetAgentInput,
  memoryForgotten,
  memoryListInput,
  memoryPage,
  memoryRecallAnswer,
  memoryRecallInput,
  memoryStoreInput,
  memoryStoreManyInput,
} from "./schema.ts";

export { MEMORY_INDEX } from "./schema.ts";

export interface MemoryOptions {
  /** Where AGENTOS_EMBEDDING_MODEL and the providers' keys are read. */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** False in a process that does not serve: no pending embeddings are taken up at start. */
  background?: boolean;
  onShutdown?: (hook: () => Promise<void>) => void;
  /** The embedding queue's batch size, delay and concurrency (tests). */
  queue?: Partial<QueueOptions>;
  /** AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT (see entry-cap.ts). */
  maxEntriesPerAgent?: number;
}

/**
 * Agent memory. Each entry is one document of the `memory` full-text index in the agent's scope: its
 * content is the searchable text and the whole entry is the document's data, so text recall is one
 * ranked index query (BM25 with a recency term) and forgetting an agent is one scope delete. An agent
 * with an embedding model also has a vector per entry in the `memory` vector index, embedded off the
 * store's path by the queue (embedding-queue.ts), and recalls by both (recall.ts). No routes: the agents
 * worker serves /api/agents/:id/memory and checks who may read which agent.
 */
export function registerMemory(worker: WorkerClient, options: MemoryOptions = {}): void {
  const trigger = worker.trigger.bind(worker);
  const search = searchClient(trigger);
  const env = options.env ?? process.env;
  const logger = options.logger ?? silentLogger();
  const embeddings = memoryEmbeddings(trigger, search, { env, logger, queue: options.queue });
  const { state, vectors, targets, queue } = embeddings;
  const statusDeps = { state, search, vectors, targets, queue };
  const cap = new EntryCap(search, {
    max: options.maxEntriesPerAgent ?? DEFAULT_MEMORY_MAX_ENTRIES_PER_AGENT,
  });
  /** A handler run once the caller may use the named agent's memory (access.ts). */
  const checked =
    <I extends { agentId: string }, O>(handler: (input: I, ctx: InvocationContext) => O | Promise<O>) =>
    async (input: I, ctx: InvocationContext): Promise<O> => {
      await assertMemoryAccess(trigger, ctx, input.agentId);
      return handler(input, ctx);
    };

  /** New entries of the agent written by `write`, within its cap (409 past it: entry-cap.ts). */
  const withinCap = async (agentId: string, entries: number, write: () => Promise<unknown>) => {
    const room = await cap.reserve(agentId, entries);
    let written = false;
    try {
      await write();
      written = true;
    } finally {
      room.done(written);
    }
  };
  const takeBack = async (agentId: string) => {
    await search.deleteScope(MEMORY_INDEX, agentId);
  };

  /**
   * A store whose agent is gone or going (a swarm archiving a deleted member's findings, a store racing
   * the agent's delete), or whose realm is being deleted (a realm delete purges its agents without
   * marking them), is taken back with the rest of that memory: nothing would ever forget it.
   */
  const remained = async (agentId: string) => {
    const realmId = await remainingAgentRealm(trigger, agentId);
    if (realmId === null) {
      await takeBack(agentId);
      throw notFound(`Agent ${agentId} not found`);
    }
    if (realmId !== undefined) await recheckRealm(trigger, realmId, () => takeBack(agentId));
  };

  worker.registerFunction(
    {
      id: "memory::store",
      description:
        "Remember {agentId, content, sessionId?, role?}; returns the entry (409 once the agent holds AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT)",
      input: memoryStoreInput,
      output: memoryEntry,
      metadata: ACTS_FOR_AGENT,
    },
    checked(async ({ agentId, ...fields }): Promise<MemoryEntry> => {
      const entry = entryOf(agentId, fields, nowIso());
      await withinCap(agentId, 1, () => search.put(MEMORY_INDEX, agentId, entry.id, documentOf(entry)));
      await remained(agentId);
      await embeddings.stored(agentId, [entry]);
      return entry;
    }),
  );

  worker.registerFunction(
    {
      id: "memory::store_many",
      description:
        "Remember several entries of an agent at once {agentId, entries: [{content, sessionId?, role?}]} (409 past AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT: none is stored)",
      input: memoryStoreManyInput,
      output: memoryEntries,
      metadata: ACTS_FOR_AGENT,
    },
    checked(async ({ agentId, entries }, ctx): Promise<{ entries: MemoryEntry[] }> => {
      const createdAt = nowIso();
      const stored = entries.map((fields) => entryOf(agentId, fields, createdAt));
      await withinCap(agentId, stored.length, () =>
        search.putMany(
          MEMORY_INDEX,
          agentId,
          stored.map((entry) => ({ id: entry.id, ...documentOf(entry) })),
        ),
      );
      // The service's own batch is a turn's: the agents worker takes a turn's writes back when its agent
      // goes meanwhile, and a lookup here would cost every turn a call.
      if (ctx.auth.kind !== "system") await remained(agentId);
      await embeddings.stored(agentId, stored);
      return { entries: stored };
    }),
  );

  worker.registerFunction(
    {
      id: "memory::recall",
      description:
        "An agent's memories best matching a free-text query {agentId, query, limit?, mode?: hybrid|text|vector}: {results: [entry + score in [0, 1] + relevance + matchedBy]}",
      input: memoryRecallInput,
      output: memoryRecallAnswer,
      metadata: ACTS_FOR_AGENT,
    },
    checked((input) => recallMemories({ trigger, env, search, vectors, targets, logger }, input)),
  );

  worker.registerFunction(
    {
      id: "memory::list",
      description: "An agent's memories newest first, a page at a time: {memories, nextCursor}",
      input: memoryListInput,
      output: memoryPage,
      metadata: ACTS_FOR_AGENT,
    },
    checked(async ({ agentId, limit, cursor }) => {
      const page = await search.list<MemoryEntry>(MEMORY_INDEX, agentId, {
        limit,
        ...(cursor ? { cursor } : {}),
      });
      return { memories: page.items.map((item) => item.data), nextCursor: page.nextCursor };
    }),
  );

  worker.registerFunction(
    {
      id: "memory::delete",
      description: "Forget one memory of an agent (and its vectors): 404 when it has no such memory",
      input: memoryDeleteInput,
      metadata: ACTS_FOR_AGENT,
    },
    checked(async ({ agentId, id }) => {
      const { deleted } = await search.delete(MEMORY_INDEX, agentId, id);
      await embeddings.removed(agentId, id);
      if (!deleted) throw notFound(`Memory ${id} not found for agent ${agentId}`);
      return null;
    }),
  );

  worker.registerFunction(
    {
      id: "memory::forget_agent",
      description: "Delete every memory of an agent, vectors included (the agent-delete cascade): {deleted}",
      input: memoryForgetAgentInput,
      output: memoryForgotten,
      metadata: ACTS_FOR_AGENT,
    },
    checked(async ({ agentId }) => {
      const forgotten = await search.deleteScope(MEMORY_INDEX, agentId);
      await embeddings.forgotten(agentId);
      return forgotten;
    }),
  );

  worker.registerFunction(
    {
      id: "memory::embedding_status",
      description:
        "How far an agent's memory is embedded with its model: {agentId, model, entries, embedded, refused, pending, lastError}",
      input: memoryAgentInput,
      output: embeddingStatus,
      metadata: ACTS_FOR_AGENT,
    },
    checked(({ agentId }) => embeddingStatusOf(statusDeps, agentId)),
  );

  worker.registerFunction(
    {
      id: "memory::backfill",
      description:
        "Embed whatever of an agent's memory has no vector for its model yet, in the background: the status as for memory::embedding_status",
      input: memoryAgentInput,
      output: embeddingStatus,
      metadata: ACTS_FOR_AGENT,
    },
    checked(({ agentId }) => backfill(statusDeps, agentId)),
  );

  worker.registerFunction(
    {
      id: "memory::on_agent_lifecycle",
      description:
        "The agent.lifecycle subscription: an agent's changed embedding model re-embeds its memory (internal)",
      input: agentLifecycleMessage,
      // Events come from the agents worker alone: an agent must not make another's memory re-embed.
      metadata: { internal: true },
    },
    ({ type, agentId, changed }) => {
      if (type === "updated" && changed?.includes("embeddingModel")) embeddings.changed(agentId);
      else if (type === "deleted") targets.forget(agentId);
      return null;
    },
  );
  worker.registerTrigger({
    type: "subscribe",
    function_id: "memory::on_agent_lifecycle",
    config: { topic: AGENT_LIFECYCLE_TOPIC },
  });

  worker.registerFunction(
    {
      id: "memory::resume_embeddings",
      description:
        "Take up the agents whose memory embeddings are pending and idle here (cron, internal): {woken}",
      input: z.object({}).passthrough(),
      metadata: { internal: true },
    },
    async (_input, ctx) => {
      requireAdmin(ctx);
      return { woken: await embeddings.resume(true) };
    },
  );

  options.onShutdown?.(() => queue.stop());
  if (options.background === false) return;
  // Agents a previous process left with pending embeddings (a failure leaves them to the sweep), then
  // every minute those nobody is at work on (another process's stores, a node gone).
  embeddings
    .resume()
    .catch((error) =>
      logger.warn({ err: (error as Error).message }, "pending memory embeddings not resumed"),
    );
  worker.registerTrigger({
    type: "cron",
    function_id: "memory::resume_embeddings",
    config: { expression: "30 * * * * *" },
  });
}

/** A new memory entry of the agent. */
function entryOf(
  agentId: string,
  fields: { content: string; sessionId?: string | null; role: MemoryEntry["role"] },
  createdAt: string,
): MemoryEntry {
  const { content, sessionId, role } = fields;
  return { id: newId("mem"), agentId, sessionId: sessionId ?? null, role, content, createdAt };
}

/** The entry as its index document: its content is the searchable text, the whole entry the data. */
const documentOf = (entry: MemoryEntry) => ({ text: entry.content, data: entry, createdAt: entry.createdAt });
