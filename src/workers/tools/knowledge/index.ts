import { z } from "zod";
import { call } from "../../../engine/call.ts";
import { searchClient } from "../../../engine/search/client.ts";
import { stateClient } from "../../../engine/state/client.ts";
import { vectorClient } from "../../../engine/vector/client.ts";
import { nowIso } from "../../../shared/clock.ts";
import { notFound } from "../../../shared/errors.ts";
import { newId } from "../../../shared/ids.ts";
import { agentIdField } from "../fields.ts";
import { defineTool } from "../tool.ts";
import {
  assertCollectionRoom,
  documentMetadata,
  MAX_COLLECTIONS_PER_AGENT,
  MAX_DOCUMENTS_PER_COLLECTION,
  MAX_NOTES_PER_AGENT,
  noteCountsScope,
  takeNoteRoom,
} from "./bounds.ts";
import {
  deleteVectors,
  embedText,
  modelOf,
  type RankedBy,
  searchByVector,
  VECTOR_INDEX,
  vectorScope,
} from "./vectors.ts";

export { VECTOR_INDEX } from "./vectors.ts";
export const notesScope = (agentId: string) => `tool_notes:${agentId}`;
/** Which namespaces an agent's documents are in, so an agent delete finds them all. */
export const namespacesScope = (agentId: string) => `tool_vector_namespaces:${agentId}`;

const content = z.string().min(1, "content must not be empty").max(32_000);
const key = z.string().trim().min(1).max(200).describe("A name to recall it by exactly");
const namespace = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[\w.-]+$/, "namespace is letters, digits, _ . -")
  .default("default");

const memoryStore = defineTool({
  id: "tool::memory_store",
  actsFor: "agent",
  description: `Remember a fact. With key it can be recalled exactly by that key (storing the key again replaces it; at most ${MAX_NOTES_PER_AGENT} keys); it is also found by tool::memory_search. {id, key}.`,
  input: z.strictObject({ agentId: agentIdField, content, key: key.optional() }),
  async run({ agentId, content, key }, ctx) {
    await ctx.agent(agentId);
    if (key) await takeNoteRoom(ctx.trigger, notesScope(agentId), agentId, key);
    const entry = await call(ctx.trigger, "memory::store", { agentId, content, role: "note" });
    if (key)
      await stateClient(ctx.trigger).set(notesScope(agentId), key, {
        key,
        content,
        memoryId: entry.id,
        updatedAt: nowIso(),
      });
    return { id: entry.id, key: key ?? null };
  },
});

const memoryRecall = defineTool({
  id: "tool::memory_recall",
  actsFor: "agent",
  description: "The fact you stored under key with tool::memory_store: {key, content, updatedAt}.",
  input: z.strictObject({ agentId: agentIdField, key }),
  async run({ agentId, key }, ctx) {
    await ctx.agent(agentId);
    const note = await stateClient(ctx.trigger).get(notesScope(agentId), key);
    if (!note) throw notFound(`Nothing is stored under key ${key}`);
    return note;
  },
});

const memorySearch = defineTool({
  id: "tool::memory_search",
  actsFor: "agent",
  description:
    "Search your memories (conversations and stored facts) by words, best first by relevance and recency: {results: [{content, score, createdAt}]}.",
  input: z.strictObject({
    agentId: agentIdField,
    query: z.string().trim().min(1).max(2000),
    limit: z.number().int().min(1).max(100).default(10),
  }),
  async run({ agentId, query, limit }, ctx) {
    await ctx.agent(agentId);
    return call(ctx.trigger, "memory::recall", { agentId, query, limit });
  },
});

const vectorStore = defineTool({
  id: "tool::vector_store",
  actsFor: "agent",
  description: `Add a document to a searchable collection of yours (namespace; at most ${MAX_COLLECTIONS_PER_AGENT} collections of ${MAX_DOCUMENTS_PER_COLLECTION} documents). With an embedding model (yours, or the service's) it is embedded and found by meaning; without one, by words (full-text BM25 with recency). Same id replaces. {id, namespace, rankedBy: vector|text}.`,
  input: z.strictObject({
    agentId: agentIdField,
    namespace,
    id: z.string().min(1).max(200).optional(),
    text: content,
    metadata: documentMetadata.optional(),
  }),
  async run({ agentId, namespace, id, text, metadata }, ctx) {
    const model = await modelOf(ctx, await ctx.agent(agentId));
    const docId = id ?? newId("doc");
    const scope = vectorScope(agentId, namespace);
    await assertCollectionRoom(ctx.trigger, {
      namespaces: namespacesScope(agentId),
      namespace,
      index: VECTOR_INDEX,
      scope,
      id,
    });
    // Embedded first: a provider that fails stores nothing (the call can simply be repeated).
    const vector = model ? await embedText(ctx, model, text) : null;
    await stateClient(ctx.trigger).set(namespacesScope(agentId), namespace, { namespace });
    await searchClient(ctx.trigger).put(VECTOR_INDEX, scope, docId, {
      text,
      data: { id: docId, text, metadata: metadata ?? null },
    });
    if (model && vector) {
      await vectorClient(ctx.trigger).putMany(VECTOR_INDEX, scope, model.key, [{ id: docId, vector }]);
    }
    const rankedBy: RankedBy = model ? "vector" : "text";
    return { id: docId, namespace, rankedBy };
  },
});

const vectorSearch = defineTool({
  id: "tool::vector_search",
  actsFor: "agent",
  description:
    "Search a collection of yours (namespace), best first: by meaning (cosine similarity of embeddings, over the documents stored since you have an embedding model) when you have one, else by words (BM25 with recency; also when the embedding provider fails). {results: [{id, text, metadata, score}], rankedBy: vector|text}.",
  input: z.strictObject({
    agentId: agentIdField,
    namespace,
    query: z.string().trim().min(1).max(2000),
    limit: z.number().int().min(1).max(100).default(10),
  }),
  async run({ agentId, namespace, query, limit }, ctx) {
    const model = await modelOf(ctx, await ctx.agent(agentId));
    const scope = vectorScope(agentId, namespace);
    if (model) {
      // A provider that fails (down, budget spent) leaves the words: the answer says which it was.
      const found = await searchByVector(ctx, model, scope, query, limit).catch(() => null);
      if (found) return { results: found, rankedBy: "vector" };
    }
    const { results } = await searchClient(ctx.trigger).query<{
      id: string;
      text: string;
      metadata: unknown;
    }>(VECTOR_INDEX, scope, query, { limit });
    return { results: results.map(({ data, score }) => ({ ...data, score })), rankedBy: "text" };
  },
});

const vectorDelete = defineTool({
  id: "tool::vector_delete",
  actsFor: "agent",
  description: "Remove a document (and its vector) from a collection of yours: {deleted}.",
  input: z.strictObject({ agentId: agentIdField, namespace, id: z.string().min(1).max(200) }),
  async run({ agentId, namespace, id }, ctx) {
    await ctx.agent(agentId);
    const scope = vectorScope(agentId, namespace);
    const { deleted } = await searchClient(ctx.trigger).delete(VECTOR_INDEX, scope, id);
    await deleteVectors(ctx.trigger, scope, id);
    if (!deleted) throw notFound(`No document ${id} in namespace ${namespace}`);
    return { deleted: id };
  },
});

/** Notes and collections of an agent go with it. */
export async function purgeKnowledge(
  trigger: Parameters<typeof stateClient>[0],
  agentId: string,
): Promise<void> {
  const state = stateClient(trigger);
  for await (const { key } of state.scan(notesScope(agentId))) await state.delete(notesScope(agentId), key);
  await state.delete(noteCountsScope, agentId);
  for await (const { key } of state.scan(namespacesScope(agentId))) {
    await searchClient(trigger).deleteScope(VECTOR_INDEX, vectorScope(agentId, key));
    await deleteVectors(trigger, vectorScope(agentId, key));
    await state.delete(namespacesScope(agentId), key);
  }
}

export const knowledgeTools = [
  memoryStore,
  memoryRecall,
  memorySearch,
  vectorStore,
  vectorSearch,
  vectorDelete,
];
