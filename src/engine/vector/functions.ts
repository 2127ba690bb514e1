import { andThen } from "../../shared/maybe-promise.ts";
import type { Engine } from "../engine.ts";
import {
  vectorCount,
  vectorCountInput,
  vectorDeleted,
  vectorDeleteInput,
  vectorDeleteOtherModelsInput,
  vectorDeleteScopeInput,
  vectorHits,
  vectorMissing,
  vectorMissingInput,
  vectorPutManyInput,
  vectorQueryInput,
  vectorRefused,
  vectorRefuseInput,
  vectorScopeDeleted,
  vectorStored,
} from "./schema.ts";
import type { VectorIndex } from "./types.ts";

/**
 * Registers vector::put_many|delete|delete_scope|delete_other_models|query|count|missing|refuse over one vector index (see
 * README.md); workers reach it only through them (`vectorClient`). Vectors travel as arrays of numbers.
 */
export function registerVectorFunctions(engine: Engine, index: VectorIndex): void {
  const worker = engine.worker("vector", `Vector index (${index.kind})`);

  worker.registerFunction(
    {
      id: "vector::put_many",
      description:
        "Store vectors of one scope and model atomically {index, scope, model, entries: [{id, vector}]}; an id's vector for the model is replaced",
      input: vectorPutManyInput,
      output: vectorStored,
    },
    ({ index: name, scope, model, entries }) =>
      andThen(index.putMany(name, scope, model, entries), () => ({ stored: entries.length })),
  );

  worker.registerFunction(
    {
      id: "vector::delete",
      description: "Remove an id's vectors of every model: {deleted: true} when there was one",
      input: vectorDeleteInput,
      output: vectorDeleted,
    },
    ({ index: name, scope, id }) => andThen(index.delete(name, scope, id), (deleted) => ({ deleted })),
  );

  worker.registerFunction(
    {
      id: "vector::delete_scope",
      description: "Remove every vector of a scope (all models): {deleted: count}",
      input: vectorDeleteScopeInput,
      output: vectorScopeDeleted,
    },
    ({ index: name, scope }) => andThen(index.deleteScope(name, scope), (deleted) => ({ deleted })),
  );

  worker.registerFunction(
    {
      id: "vector::delete_other_models",
      description:
        "Remove a scope's vectors of every model but one (a re-embedding done) {index, scope, model}: {deleted: count}",
      input: vectorDeleteOtherModelsInput,
      output: vectorScopeDeleted,
    },
    ({ index: name, scope, model }) =>
      andThen(index.deleteOtherModels(name, scope, model), (deleted) => ({ deleted })),
  );

  worker.registerFunction(
    {
      id: "vector::query",
      description:
        "The scope's ids nearest a vector among one model's vectors, best first: {results: [{id, score (cosine)}]}",
      input: vectorQueryInput,
      output: vectorHits,
    },
    ({ index: name, scope, model, vector, limit, rescore }) =>
      andThen(
        index.query(name, scope, vector, { limit, model, ...(rescore ? { rescore } : {}) }),
        (results) => ({ results }),
      ),
  );

  worker.registerFunction(
    {
      id: "vector::count",
      description:
        "How many vectors a scope holds, of one model or of all, and how many ids were refused: {count, refused}",
      input: vectorCountInput,
      output: vectorCount,
    },
    ({ index: name, scope, model }) =>
      andThen(index.count(name, scope, model), (count) =>
        andThen(index.refused(name, scope, model), (refused) => ({ count, refused })),
      ),
  );

  worker.registerFunction(
    {
      id: "vector::refuse",
      description:
        "Record that the provider refused to embed these ids for the model (their content): vector::missing leaves them out until they are deleted {index, scope, model, ids}: {refused: count}",
      input: vectorRefuseInput,
      output: vectorRefused,
    },
    ({ index: name, scope, model, ids }) =>
      andThen(index.refuse(name, scope, model, ids), () => ({ refused: ids.length })),
  );

  worker.registerFunction(
    {
      id: "vector::missing",
      description: "Those of ids that have no vector for the model in the scope, in their order: {ids}",
      input: vectorMissingInput,
      output: vectorMissing,
    },
    ({ index: name, scope, model, ids }) =>
      andThen(index.missing(name, scope, model, ids), (missing) => ({ ids: missing })),
  );
}
