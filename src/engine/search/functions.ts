import { nowIso } from "../../shared/clock.ts";
import { andThen } from "../../shared/maybe-promise.ts";
import type { Engine } from "../engine.ts";
import {
  searchCountInput,
  searchDeleteInput,
  searchDeleteScopeInput,
  searchGetInput,
  searchListInput,
  searchPutInput,
  searchPutManyInput,
  searchQueryInput,
} from "./schema.ts";
import type { TextDoc, TextIndex } from "./types.ts";

/**
 * Registers search::put|put_many|delete|delete_scope|list|query|count|get over one text index; workers
 * reach it only through them.
 */
export function registerSearchFunctions(engine: Engine, index: TextIndex): void {
  const worker = engine.worker("search", `Full-text index (${index.kind})`);

  worker.registerFunction(
    {
      id: "search::put",
      description:
        "Index a document {index, scope, id, text, data?, createdAt?}; replaces one with the same id",
      input: searchPutInput,
    },
    ({ index: name, scope, id, ...fields }) => {
      const doc = storedDoc(fields);
      return andThen(index.put(name, scope, id, doc), () => ({ id, createdAt: doc.createdAt }));
    },
  );

  worker.registerFunction(
    {
      id: "search::put_many",
      description:
        "Index several documents of one scope {index, scope, docs: [{id, text, data?, createdAt?}]}, each as search::put",
      input: searchPutManyInput,
    },
    ({ index: name, scope, docs }) => {
      const stored = docs.map(({ id, ...fields }) => ({ id, doc: storedDoc(fields) }));
      return andThen(index.putMany(name, scope, stored), () => ({
        docs: stored.map(({ id, doc }) => ({ id, createdAt: doc.createdAt })),
      }));
    },
  );

  worker.registerFunction(
    {
      id: "search::delete",
      description: "Remove a document: {deleted: true} when it existed",
      input: searchDeleteInput,
    },
    ({ index: name, scope, id }) => andThen(index.delete(name, scope, id), (deleted) => ({ deleted })),
  );

  worker.registerFunction(
    {
      id: "search::delete_scope",
      description: "Remove every document of a scope: {deleted: count}",
      input: searchDeleteScopeInput,
    },
    ({ index: name, scope }) => andThen(index.deleteScope(name, scope), (deleted) => ({ deleted })),
  );

  worker.registerFunction(
    {
      id: "search::list",
      description:
        "A scope's documents newest first, a page at a time: {items: [{id, data, createdAt}], nextCursor}",
      input: searchListInput,
    },
    ({ index: name, scope, limit, cursor }) =>
      index.list(name, scope, { limit, ...(cursor ? { cursor } : {}) }),
  );

  worker.registerFunction(
    {
      id: "search::count",
      description: "How many documents a scope holds: {count}",
      input: searchCountInput,
    },
    ({ index: name, scope }) => andThen(index.count(name, scope), (count) => ({ count })),
  );

  worker.registerFunction(
    {
      id: "search::get",
      description:
        "Those of ids that are documents of the scope: {items: [{id, data, createdAt}]}, in no order",
      input: searchGetInput,
    },
    ({ index: name, scope, ids }) => andThen(index.get(name, scope, ids), (items) => ({ items })),
  );

  worker.registerFunction(
    {
      id: "search::query",
      description: "Free-text search in one scope, best first by BM25 relevance and recency: {results}",
      input: searchQueryInput,
    },
    ({ index: name, scope, query, limit, recencyHalfLifeMs, candidates }) =>
      andThen(index.search(name, scope, query, { limit, recencyHalfLifeMs, candidates }), (results) => ({
        results,
      })),
  );
}

/** A document as the index keeps it: no data is null, no creation time is now. */
function storedDoc(fields: { text: string; data?: unknown; createdAt?: string }): TextDoc {
  return { text: fields.text, data: fields.data ?? null, createdAt: fields.createdAt ?? nowIso() };
}
