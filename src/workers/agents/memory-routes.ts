import type { InvocationContext } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { noContent, relayed } from "../../shared/outputs.ts";
import {
  memoryEmbeddingStatus,
  memoryEmbeddingsRouteInput,
  memoryRecallHits,
  memoryRecallRouteInput,
} from "./memory-schema.ts";
import type { Agent } from "./schema.ts";
import {
  agentIdInput,
  memoryCleared,
  memoryDeleteRouteInput,
  memoryListRouteInput,
  memoryPage,
} from "./schema.ts";

/**
 * An agent's memory over HTTP: search, list, forget one or all, and how far it is embedded (with a
 * backfill). The memory worker holds it; these check first that the caller may see the agent (`load`:
 * another realm's reads as missing).
 */
export function registerAgentMemory(
  worker: WorkerClient,
  load: (id: string, ctx: InvocationContext) => Promise<Agent>,
): void {
  const trigger = worker.trigger.bind(worker);

  worker.registerFunction(
    {
      id: "agent::memory",
      description:
        "Search an agent's memory by words and meaning (mode: hybrid, text or vector): {results}, each saying how it matched",
      input: memoryRecallRouteInput,
      output: memoryRecallHits,
    },
    async ({ id, query, limit, mode }, ctx) => {
      await load(id, ctx);
      return relayed(
        memoryRecallHits,
        trigger({
          function_id: "memory::recall",
          payload: { agentId: id, query, limit, ...(mode ? { mode } : {}) },
        }),
      );
    },
  );

  // The embedding status and the backfill relay the memory worker's answer for an agent the caller may see.
  const relayStatus = (
    id: string,
    description: string,
    relay: "memory::embedding_status" | "memory::backfill",
  ) =>
    worker.registerFunction(
      { id, description, input: memoryEmbeddingsRouteInput, output: memoryEmbeddingStatus },
      async ({ id: agentId }, ctx) => {
        await load(agentId, ctx);
        return relayed(memoryEmbeddingStatus, trigger({ function_id: relay, payload: { agentId } }));
      },
    );
  relayStatus(
    "agent::memory_embeddings",
    "How far an agent's memory is embedded with its embedding model: {model, entries, embedded, pending, lastError}",
    "memory::embedding_status",
  );
  relayStatus(
    "agent::memory_backfill",
    "Embed whatever of an agent's memory has no vector for its embedding model yet (in the background): the status",
    "memory::backfill",
  );

  worker.registerFunction(
    {
      id: "agent::memory_list",
      description: "An agent's memories newest first: {memories, nextCursor}",
      input: memoryListRouteInput,
      output: memoryPage,
    },
    async ({ id, limit, cursor }, ctx) => {
      await load(id, ctx);
      return relayed(
        memoryPage,
        trigger({
          function_id: "memory::list",
          payload: { agentId: id, limit, ...(cursor ? { cursor } : {}) },
        }),
      );
    },
  );

  worker.registerFunction(
    {
      id: "agent::memory_delete",
      description: "Forget one memory of an agent",
      input: memoryDeleteRouteInput,
      output: noContent,
    },
    async ({ id, memoryId }, ctx) => {
      await load(id, ctx);
      await trigger({ function_id: "memory::delete", payload: { agentId: id, id: memoryId } });
    },
  );

  worker.registerFunction(
    {
      id: "agent::memory_clear",
      description: "Forget every memory of an agent: {deleted}",
      input: agentIdInput,
      output: memoryCleared,
    },
    async ({ id }, ctx) => {
      await load(id, ctx);
      return relayed(
        memoryCleared,
        trigger({ function_id: "memory::forget_agent", payload: { agentId: id } }),
      );
    },
  );

  worker.registerRoute("agent::memory", "POST", "/api/agents/:id/memory");
  worker.registerRoute("agent::memory_list", "GET", "/api/agents/:id/memory");
  worker.registerRoute("agent::memory_clear", "DELETE", "/api/agents/:id/memory");
  worker.registerRoute("agent::memory_embeddings", "GET", "/api/agents/:id/memory/embeddings");
  worker.registerRoute("agent::memory_backfill", "POST", "/api/agents/:id/memory/embeddings", {
    status: 202,
  });
  worker.registerRoute("agent::memory_delete", "DELETE", "/api/agents/:id/memory/:memoryId");
}
