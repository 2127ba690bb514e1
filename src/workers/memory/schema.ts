import { z } from "zod";
import { isStorableText, storableText } from "../../engine/state/schema.ts";
import { MAX_MEMORY_CONTENT_BYTES } from "../../shared/limits.ts";
import { nextCursor } from "../../shared/outputs.ts";

/** The text index (and vector index) that holds memories, one scope per agent. */
export const MEMORY_INDEX = "memory";

export const MEMORY_ROLES = ["user", "assistant", "system", "tool", "note"] as const;
export const MAX_CONTENT_BYTES = MAX_MEMORY_CONTENT_BYTES;
export const MAX_QUERY_LENGTH = 2000;
export const DEFAULT_RECALL_LIMIT = 10;
export const MAX_RECALL_LIMIT = 200;

export type MemoryRole = (typeof MEMORY_ROLES)[number];

/** A stored memory; recall adds its `score`. */
export const memoryEntry = z.object({
  id: z.string(),
  agentId: z.string(),
  sessionId: z.string().nullable(),
  role: z.enum(MEMORY_ROLES),
  content: z.string(),
  createdAt: z.string(),
});
export type MemoryEntry = z.infer<typeof memoryEntry>;

const agentId = storableText("agentId", 256).min(1, "agentId must not be empty");

const content = z
  .string()
  .min(1, "content must not be empty")
  .refine(isStorableText, "content must be valid text without NUL")
  .refine(
    (text) => Buffer.byteLength(text) <= MAX_CONTENT_BYTES,
    `content must be at most ${MAX_CONTENT_BYTES} bytes`,
  );

export const memoryStoreInput = z.strictObject({
  agentId,
  content,
  sessionId: storableText("sessionId", 256).min(1, "sessionId must not be empty").nullish(),
  role: z.enum(MEMORY_ROLES).default("note"),
});

export const memoryStoreManyInput = z.strictObject({
  agentId,
  entries: z
    .array(memoryStoreInput.omit({ agentId: true }))
    .min(1, "entries must hold at least one memory")
    .max(100, "entries must hold at most 100 memories"),
});

export const RECALL_MODES = ["hybrid", "text", "vector"] as const;
export type RecallMode = (typeof RECALL_MODES)[number];

export const recallMode = z
  .enum(RECALL_MODES)
  .optional()
  .describe(
    "hybrid: words and meaning fused (the default when the agent has an embedding model); text: words only (the default without one); vector: meaning only (needs an embedding model)",
  );

export const memoryRecallInput = z.strictObject({
  agentId,
  query: z.string().min(1).max(MAX_QUERY_LENGTH),
  limit: z.number().int().min(1).max(MAX_RECALL_LIMIT).default(DEFAULT_RECALL_LIMIT),
  mode: recallMode,
});

export const memoryForgetAgentInput = z.strictObject({ agentId });

export const memoryListInput = z.strictObject({
  agentId,
  limit: z.number().int().min(1).max(MAX_RECALL_LIMIT).default(50),
  cursor: z.string().min(1).max(512).optional(),
});

export const memoryDeleteInput = z.strictObject({
  agentId,
  id: storableText("id", 256).min(1, "id must not be empty"),
});

export const memoryEntries = z.object({ entries: z.array(memoryEntry) });
export const memoryRecallAnswer = z.object({
  results: z.array(
    memoryEntry.extend({
      score: z
        .number()
        .describe(
          "How well the content matches the query, in [0, 1]: the larger of the words' similarity and the vectors' cosine (clipped at 0)",
        ),
      relevance: z
        .number()
        .describe(
          "The rank score the results are ordered by: text mode the index's (relevance with recency); hybrid and vector the fused relevance with recency (see fusion.ts), in [0, 1]",
        ),
      matchedBy: z.array(z.enum(["text", "vector"])).describe("Which searches found it"),
    }),
  ),
});
export type RecallHit = z.infer<typeof memoryRecallAnswer>["results"][number];

export const memoryAgentInput = z.strictObject({ agentId });

export { type EmbeddingStatus, embeddingStatus } from "../../shared/embedding-status.ts";

/** agent.lifecycle messages as the memory worker reads them (see src/shared/agent-events.ts). */
export const agentLifecycleMessage = z.looseObject({
  type: z.string().max(64),
  agentId: z.string().min(1).max(256),
  changed: z.array(z.string().max(256)).max(100).optional(),
});
export const memoryPage = z.object({ memories: z.array(memoryEntry), nextCursor });
export const memoryForgotten = z.object({ deleted: z.number() });
