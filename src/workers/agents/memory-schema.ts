import { z } from "zod";
import { queryInt } from "../../shared/query-int.ts";
import { memoryEntry } from "./schema.ts";

/**
 * The memory routes' own schemas (recall modes, how each result matched, embedding progress).
 */

const agentIdParam = z.string().min(1).max(256);

export const memoryRecallRouteInput = z.strictObject({
  id: agentIdParam,
  query: z.string().min(1, "query is required").max(2000),
  limit: queryInt("limit", 1, 200).default(10),
  mode: z
    .enum(["hybrid", "text", "vector"])
    .optional()
    .describe(
      "hybrid: words and meaning fused (the default when the agent has an embedding model); text: words only (the default without one); vector: meaning only (needs an embedding model)",
    ),
});

export const memoryRecallHits = z.object({
  results: z.array(
    memoryEntry.extend({
      score: z
        .number()
        .describe(
          "How well the memory matches the query, in [0, 1]: the larger of the words' similarity and the vectors' cosine (clipped at 0)",
        ),
      relevance: z
        .number()
        .describe(
          "What the results are ordered by: text mode the text index's rank score; hybrid and vector the fused rank with recency, in (0, 1]",
        ),
      matchedBy: z.array(z.enum(["text", "vector"])).describe("Which searches found it"),
    }),
  ),
});

export const memoryEmbeddingsRouteInput = z.strictObject({ id: agentIdParam });

export { embeddingStatus as memoryEmbeddingStatus } from "../../shared/embedding-status.ts";
