import type { SearchClient } from "../../engine/search/client.ts";
import { MAX_SEARCH_LIMIT } from "../../engine/search/schema.ts";
import { DEFAULT_RECENCY_HALF_LIFE_MS } from "../../engine/search/score.ts";
import type { TriggerFn } from "../../engine/types.ts";
import type { VectorClient } from "../../engine/vector/client.ts";
import { MIN_RESCORE, RESCORE_PER_HIT, unitVector } from "../../engine/vector/scan.ts";
import { embed } from "../../llm/embeddings/embed.ts";
import { nowMs } from "../../shared/clock.ts";
import { AppError, badRequest, isAppError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import type { AgentEmbeddings, EmbeddingTarget } from "./agent-embedding.ts";
import { fuse, hybridScore } from "./fusion.ts";
import { MEMORY_INDEX, type MemoryEntry, type RecallHit, type RecallMode } from "./schema.ts";
import { similarityTo } from "./similarity.ts";

export interface RecallDeps {
  trigger: TriggerFn;
  env: NodeJS.ProcessEnv;
  search: SearchClient;
  vectors: VectorClient;
  targets: AgentEmbeddings;
  logger: Logger;
}

/** Candidates each list brings per result asked (fusion reorders them). */
const OVER_FETCH = 4;
/** How long hybrid recall waits for the query's vector before answering by text alone (the turn waits on it). */
export const HYBRID_EMBED_DEADLINE_MS = 1500;
/** Vector recall was asked for: it waits longer, and a failure is the answer. */
const VECTOR_EMBED_DEADLINE_MS = 10_000;

/** Falling back to text is logged once, until a query embeds again. */
let fallbackLogged = false;

/**
 * An agent's memories for a query. text: the text index's best (BM25 × recency) shown by how well their
 * words match, as before embeddings. hybrid (the default with an embedding model): the text and vector
 * lists, each over-fetched, fused (fusion.ts), the text one a candidate list (the newest matches and the
 * older ones holding a rare word, see search types.ts); entries not yet embedded still come through it,
 * and when the query cannot be embedded in time (provider down or slow, budget spent) the answer is the
 * text one. vector: the vector list alone.
 */
export async function recallMemories(
  deps: RecallDeps,
  input: { agentId: string; query: string; limit: number; mode?: RecallMode },
): Promise<{ results: RecallHit[] }> {
  const { agentId, query, limit } = input;
  const target = input.mode === "text" ? null : await targetOf(deps, agentId, input.mode === "vector");
  if (input.mode === "vector" && !target) {
    throw badRequest(
      `mode: "vector" needs an embedding model, and agent ${agentId} has none (set its embeddingModel, or AGENTOS_EMBEDDING_MODEL); use mode "text" or "hybrid"`,
    );
  }
  const mode = input.mode ?? (target ? "hybrid" : "text");
  if (mode === "text" || !target) return textRecall(deps, agentId, query, limit);

  const fetch = Math.min(MAX_SEARCH_LIMIT, limit * OVER_FETCH);
  const [text, vector] = await Promise.all([
    // A candidate list: the vector list brings the older related entries, so the text index need not
    // rank every older match of a common word (search types.ts); the newest matches are all ranked.
    mode === "hybrid"
      ? deps.search
          .query<MemoryEntry>(MEMORY_INDEX, agentId, query, { limit: fetch, candidates: true })
          .then((r) => r.results)
      : [],
    vectorHits(deps, target, query, { fetch, limit }, mode === "vector"),
  ]);
  // No vectors in time: the text answer, ranked over every match as in text mode.
  if (vector === null) return textRecall(deps, agentId, query, limit);

  const entries = new Map(text.map((hit) => [hit.id, hit.data]));
  const unknown = vector.filter((hit) => !entries.has(hit.id)).map((hit) => hit.id);
  if (unknown.length > 0) {
    for (const item of await deps.search.get<MemoryEntry>(MEMORY_INDEX, agentId, unknown)) {
      entries.set(item.id, item.data);
    }
  }
  const cosine = new Map(vector.map((hit) => [hit.id, hit.score]));
  // Each entry read once: fusion scores every candidate, and the results are shown with the same score.
  const scoreOf = similarityTo(query);
  const scored = new Map<string, number>();
  const similarity = (entry: MemoryEntry) => {
    const known = scored.get(entry.id);
    if (known !== undefined) return known;
    const score = scoreOf(entry.content);
    scored.set(entry.id, score);
    return score;
  };
  const fused = fuse(
    {
      text: text.map((hit) => hit.data),
      // A vector whose entry is gone (deleted meanwhile) is no result.
      vector: vector.flatMap((hit) => {
        const item = entries.get(hit.id);
        return item ? [{ item, score: hit.score }] : [];
      }),
    },
    {
      lists: mode === "hybrid" ? 2 : 1,
      limit,
      nowMs: nowMs(),
      halfLifeMs: DEFAULT_RECENCY_HALF_LIFE_MS,
      similarity,
    },
  );
  return {
    results: fused.map(({ item, matchedBy, relevance }) =>
      hitOf(item, hybridScore(similarity(item), cosine.get(item.id)), relevance, matchedBy),
    ),
  };
}

/** The agent's embedding target; a failed lookup answers by text unless vectors were asked for. */
async function targetOf(deps: RecallDeps, agentId: string, required: boolean) {
  try {
    return await deps.targets.of(agentId);
  } catch (error) {
    if (required) throw error;
    deps.logger.debug({ agentId, err: (error as Error).message }, "memory recall by text: no agent model");
    return null;
  }
}

/**
 * The query's nearest entries by vector, or null (hybrid only) when the query could not be embedded, or
 * the provider answered a vector the index cannot take (NaN, zero, another length than the model's
 * stored vectors): the provider made it, not the caller.
 */
async function vectorHits(
  deps: RecallDeps,
  target: EmbeddingTarget,
  query: string,
  size: { fetch: number; limit: number },
  required: boolean,
): Promise<Array<{ id: string; score: number }> | null> {
  const deadline = required ? VECTOR_EMBED_DEADLINE_MS : HYBRID_EMBED_DEADLINE_MS;
  let vector: Float32Array;
  try {
    const embedded = await embed({
      choice: target.choice,
      texts: [query],
      trigger: deps.trigger,
      env: deps.env,
      account: target.payer,
      signal: AbortSignal.timeout(deadline),
      timeoutMs: deadline,
      maxRetries: 0,
    });
    vector = embedded.vectors[0] as Float32Array;
  } catch (error) {
    return notEmbedded(deps, target, error, required);
  }
  try {
    // Checked here first: the index's own check would name each of a vector's bad values.
    unitVector(vector);
    // The list is over-fetched for fusion, but only its first places decide: it is rescored as a list of
    // `limit` would be (reading the int8 vectors is most of a vector query's time).
    const { results } = await deps.vectors.query(MEMORY_INDEX, target.agentId, vector, {
      model: target.key,
      limit: size.fetch,
      rescore: Math.max(size.fetch, size.limit * RESCORE_PER_HIT, MIN_RESCORE),
    });
    fallbackLogged = false;
    return results;
  } catch (error) {
    if (!isAppError(error) || error.code !== "validation") throw error;
    return notEmbedded(deps, target, unusable(target, error), required);
  }
}

/** The query's vector refused by the index, as the failure of the provider that made it. */
function unusable(target: EmbeddingTarget, error: AppError): AppError {
  const { provider, model } = target.choice;
  return new AppError(
    "upstream",
    `Provider ${provider.id} answered an unusable embedding for the query (model ${model.id}): ${error.message}`,
    { cause: error },
  );
}

/** Vector recall asked for: the failure is the answer. Hybrid: null, to answer by text (logged once). */
function notEmbedded(deps: RecallDeps, target: EmbeddingTarget, error: unknown, required: boolean): null {
  if (required) throw error;
  if (!fallbackLogged) {
    fallbackLogged = true;
    deps.logger.warn(
      { agentId: target.agentId, model: target.key, err: (error as Error).message },
      "memory recall by text only: the query could not be embedded (logged once until it can)",
    );
  }
  return null;
}

/** Recall by words, as before embeddings: the index's best, shown by how well their words match. */
async function textRecall(deps: RecallDeps, agentId: string, query: string, limit: number) {
  const { results } = await deps.search.query<MemoryEntry>(MEMORY_INDEX, agentId, query, { limit });
  return { results: textResults(query, results) };
}

function textResults(query: string, hits: ReadonlyArray<{ data: MemoryEntry; score: number }>): RecallHit[] {
  // The index picks the best `limit` (relevance, then recency); they are shown best match first.
  const similarity = similarityTo(query);
  const shown = hits.map(({ data: entry, score }, rank) => ({
    hit: hitOf(entry, similarity(entry.content), score, ["text"]),
    rank,
  }));
  shown.sort((a, b) => b.hit.score - a.hit.score || a.rank - b.rank);
  return shown.map(({ hit }) => hit);
}

/** A result: the entry's fields (no others its document may carry), then how it matched. */
const hitOf = (
  entry: MemoryEntry,
  score: number,
  relevance: number,
  matchedBy: RecallHit["matchedBy"],
): RecallHit => ({
  id: entry.id,
  agentId: entry.agentId,
  sessionId: entry.sessionId,
  role: entry.role,
  content: entry.content,
  score,
  relevance,
  createdAt: entry.createdAt,
  matchedBy,
});
