import { searchClient } from "../../../engine/search/client.ts";
import type { TriggerFn } from "../../../engine/types.ts";
import { vectorClient } from "../../../engine/vector/client.ts";
import { payerOf } from "../../../llm/cost-event.ts";
import { effectiveEmbeddingModel, resolveEmbeddingChoice } from "../../../llm/embeddings/choice.ts";
import { embed } from "../../../llm/embeddings/embed.ts";
import type { EmbeddingChoice } from "../../../llm/embeddings/types.ts";
import { isFunctionNotFound } from "../../../shared/errors.ts";
import type { ToolAgent, ToolContext } from "../tool.ts";

/**
 * The collection tools' vectors (issue #35): an agent with an embedding model (its own `embeddingModel`,
 * else AGENTOS_EMBEDDING_MODEL) has each document embedded when stored, into the vector index under
 * the same index and scope as the text index's document, and searches by the query's vector. Without
 * one, the tools rank by the full-text index (BM25 with recency), and say so (`rankedBy: "text"`).
 */
export const VECTOR_INDEX = "tool_vectors";
export const vectorScope = (agentId: string, namespace: string) => `${agentId}\u0001${namespace}`;

export type RankedBy = "vector" | "text";

interface Model {
  choice: EmbeddingChoice;
  /** The vectors' model name: `<provider>/<model id>`, as the memory worker names them. */
  key: string;
  agent: ToolAgent;
}

/** Per request of the tools: an agent waits for it. */
const EMBED_TIMEOUT_MS = 10_000;

/** The agent's embedding model, or null: its collections are ranked by words. */
export async function modelOf(ctx: ToolContext, agent: ToolAgent): Promise<Model | null> {
  const name = effectiveEmbeddingModel(agent, ctx.env);
  if (!name) return null;
  const choice = await resolveEmbeddingChoice(ctx.trigger, name);
  return { choice, key: `${choice.model.provider}/${choice.model.id}`, agent };
}

/** One text's vector, charged to the agent's realm and budget (a sub-agent's root's) like its completions. */
export async function embedText(ctx: ToolContext, model: Model, text: string): Promise<Float32Array> {
  const { vectors } = await embed({
    choice: model.choice,
    // embed() cuts it to the model's input.
    texts: [text],
    trigger: ctx.trigger,
    env: ctx.env,
    // A sub-agent's from its tree's root, as its turns are: its own account has no budget to spend.
    account: payerOf(model.agent),
    timeoutMs: EMBED_TIMEOUT_MS,
    maxRetries: 1,
  });
  return vectors[0] as Float32Array;
}

/** The collection's documents nearest the query's vector, best first, with their cosine as score. */
export async function searchByVector(
  ctx: ToolContext,
  model: Model,
  scope: string,
  query: string,
  limit: number,
): Promise<Array<{ id: string; text: string; metadata: unknown; score: number }>> {
  const vector = await embedText(ctx, model, query);
  const { results } = await vectorClient(ctx.trigger).query(VECTOR_INDEX, scope, vector, {
    model: model.key,
    limit,
  });
  if (results.length === 0) return [];
  const docs = await searchClient(ctx.trigger).get<{ id: string; text: string; metadata: unknown }>(
    VECTOR_INDEX,
    scope,
    results.map((hit) => hit.id),
  );
  const byId = new Map(docs.map((doc) => [doc.id, doc.data]));
  return results.flatMap((hit) => {
    const doc = byId.get(hit.id);
    return doc ? [{ ...doc, score: hit.score }] : [];
  });
}

/** Vectors are optional: without the vector functions (a service without them) there are none to remove. */
export async function deleteVectors(trigger: TriggerFn, scope: string, id?: string): Promise<void> {
  const vectors = vectorClient(trigger);
  await (id === undefined
    ? vectors.deleteScope(VECTOR_INDEX, scope)
    : vectors.delete(VECTOR_INDEX, scope, id)
  ).catch((error: unknown) => {
    if (!isFunctionNotFound(error)) throw error;
  });
}
