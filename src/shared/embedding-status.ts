import { z } from "zod";

/**
 * How far an agent's memory is embedded: what `memory::embedding_status` answers and the agents
 * worker's `GET /api/agents/:id/memory/embeddings` relays (one schema for both, and the CLI's type).
 */
export const embeddingStatus = z.object({
  agentId: z.string(),
  model: z
    .string()
    .nullable()
    .describe("The vectors' model, <provider>/<model>; null: the agent has no embedding model"),
  entries: z.number().int().describe("Memories the agent has"),
  embedded: z.number().int().describe("Of them, those with a vector of the model"),
  refused: z
    .number()
    .int()
    .describe(
      "Of them, those the provider refused to embed (their content): never sent again, found by words only",
    ),
  pending: z.number().int().describe("Of them, those still waiting for one"),
  lastError: z
    .string()
    .nullable()
    .describe("Why this node's last attempt failed (retried with backoff), or null"),
});
export type EmbeddingStatus = z.infer<typeof embeddingStatus>;
