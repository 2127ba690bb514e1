import { call } from "../call.ts";
import type { TriggerFn } from "../types.ts";

/** A vector as a payload carries it (an embedding client's Float32Array is copied to numbers). */
const numbers = (vector: ArrayLike<number>): number[] => Array.from(vector);

/** Typed wrappers over the vector::* functions, so workers read `vectors.query(...)` and still go through trigger. */
export function vectorClient(trigger: TriggerFn) {
  return {
    putMany: (
      index: string,
      scope: string,
      model: string,
      entries: ReadonlyArray<{ id: string; vector: ArrayLike<number> }>,
    ) =>
      call(trigger, "vector::put_many", {
        index,
        scope,
        model,
        entries: entries.map(({ id, vector }) => ({ id, vector: numbers(vector) })),
      }),
    delete: (index: string, scope: string, id: string) =>
      call(trigger, "vector::delete", { index, scope, id }),
    deleteScope: (index: string, scope: string) => call(trigger, "vector::delete_scope", { index, scope }),
    deleteOtherModels: (index: string, scope: string, model: string) =>
      call(trigger, "vector::delete_other_models", { index, scope, model }),
    query: (
      index: string,
      scope: string,
      vector: ArrayLike<number>,
      options: { model: string; limit?: number; rescore?: number },
    ) => call(trigger, "vector::query", { index, scope, vector: numbers(vector), ...options }),
    count: (index: string, scope: string, model?: string) =>
      call(trigger, "vector::count", { index, scope, ...(model ? { model } : {}) }).then(
        ({ count }) => count,
      ),
    /** Vectors of the model and ids refused for it (see vector::refuse). */
    counts: (index: string, scope: string, model: string) =>
      call(trigger, "vector::count", { index, scope, model }),
    refuse: (index: string, scope: string, model: string, ids: readonly string[]) =>
      call(trigger, "vector::refuse", { index, scope, model, ids: [...ids] }),
    missing: (index: string, scope: string, model: string, ids: readonly string[]) =>
      call(trigger, "vector::missing", { index, scope, model, ids: [...ids] }).then((answer) => answer.ids),
  };
}

export type VectorClient = ReturnType<typeof vectorClient>;
