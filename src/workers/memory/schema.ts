import { z } from "zod";
import { isStorableText, storableText } from "../../engine/state/schema.ts";
import { nextCursor } from "../../shared/outputs.ts";

export const MEMORY_ROLES = ["user", "assistant", "system", "tool", "note"] as const;
export const MAX_CONTENT_BYTES = 32 * 1024;
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

export const memoryRecallInput = z.strictObject({
  agentId,
  query: z.string().min(1).max(MAX_QUERY_LENGTH),
  limit: z.number().int().min(1).max(MAX_RECALL_LIMIT).default(DEFAULT_RECALL_LIMIT),
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
      score: z.number().describe("How well the content matches the query, in [0, 1]"),
      relevance: z.number().describe("The index's rank score (relevance with recency)"),
    }),
  ),
});
export const memoryPage = z.object({ memories: z.array(memoryEntry), nextCursor });
export const memoryForgotten = z.object({ deleted: z.number() });
