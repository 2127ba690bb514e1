import { ACTS_FOR_AGENT } from "../../engine/acting-agent.ts";
import { searchClient } from "../../engine/search/client.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { nowIso } from "../../shared/clock.ts";
import { notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import {
  type MemoryEntry,
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
import { similarity } from "./similarity.ts";

/** The text index that holds memories, one scope per agent. */
export const MEMORY_INDEX = "memory";

/**
 * Agent memory. Each entry is one document of the `memory` full-text index in the agent's scope:
 * its content is the searchable text and the whole entry is the document's data, so recall is one
 * ranked index query (BM25 with a recency term) and forgetting an agent is one scope delete. No
 * routes: the agents worker serves /api/agents/:id/memory and checks who may read which agent.
 */
export function registerMemory(worker: WorkerClient): void {
  const search = searchClient((request) => worker.trigger(request));

  worker.registerFunction(
    {
      id: "memory::store",
      description: "Remember {agentId, content, sessionId?, role?}; returns the entry",
      input: memoryStoreInput,
      output: memoryEntry,
      metadata: ACTS_FOR_AGENT,
    },
    async ({ agentId, ...fields }): Promise<MemoryEntry> => {
      const entry = entryOf(agentId, fields, nowIso());
      await search.put(MEMORY_INDEX, agentId, entry.id, documentOf(entry));
      return entry;
    },
  );

  worker.registerFunction(
    {
      id: "memory::store_many",
      description:
        "Remember several entries of an agent at once {agentId, entries: [{content, sessionId?, role?}]}",
      input: memoryStoreManyInput,
      output: memoryEntries,
      metadata: ACTS_FOR_AGENT,
    },
    async ({ agentId, entries }): Promise<{ entries: MemoryEntry[] }> => {
      const createdAt = nowIso();
      const stored = entries.map((fields) => entryOf(agentId, fields, createdAt));
      await search.putMany(
        MEMORY_INDEX,
        agentId,
        stored.map((entry) => ({ id: entry.id, ...documentOf(entry) })),
      );
      return { entries: stored };
    },
  );

  worker.registerFunction(
    {
      id: "memory::recall",
      description:
        "An agent's memories best matching a free-text query: {results: [entry + score in [0, 1] + relevance]}",
      input: memoryRecallInput,
      output: memoryRecallAnswer,
      metadata: ACTS_FOR_AGENT,
    },
    async ({ agentId, query, limit }) => {
      const { results } = await search.query<MemoryEntry>(MEMORY_INDEX, agentId, query, { limit });
      // The index picks the best `limit` (relevance, then recency); they are shown best match first.
      const hits = results.map(({ data: entry, score }, rank) => ({
        id: entry.id,
        agentId: entry.agentId,
        sessionId: entry.sessionId,
        role: entry.role,
        content: entry.content,
        score: similarity(query, entry.content),
        relevance: score,
        createdAt: entry.createdAt,
        rank,
      }));
      hits.sort((a, b) => b.score - a.score || a.rank - b.rank);
      return { results: hits.map(({ rank: _rank, ...hit }) => hit) };
    },
  );

  worker.registerFunction(
    {
      id: "memory::list",
      description: "An agent's memories newest first, a page at a time: {memories, nextCursor}",
      input: memoryListInput,
      output: memoryPage,
      metadata: ACTS_FOR_AGENT,
    },
    async ({ agentId, limit, cursor }) => {
      const page = await search.list<MemoryEntry>(MEMORY_INDEX, agentId, {
        limit,
        ...(cursor ? { cursor } : {}),
      });
      return { memories: page.items.map((item) => item.data), nextCursor: page.nextCursor };
    },
  );

  worker.registerFunction(
    {
      id: "memory::delete",
      description: "Forget one memory of an agent: 404 when it has no such memory",
      input: memoryDeleteInput,
      metadata: ACTS_FOR_AGENT,
    },
    async ({ agentId, id }) => {
      const { deleted } = await search.delete(MEMORY_INDEX, agentId, id);
      if (!deleted) throw notFound(`Memory ${id} not found for agent ${agentId}`);
      return null;
    },
  );

  worker.registerFunction(
    {
      id: "memory::forget_agent",
      description: "Delete every memory of an agent (the agent-delete cascade): {deleted}",
      input: memoryForgetAgentInput,
      output: memoryForgotten,
      metadata: ACTS_FOR_AGENT,
    },
    ({ agentId }) => search.deleteScope(MEMORY_INDEX, agentId),
  );
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
