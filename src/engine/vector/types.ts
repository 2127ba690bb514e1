import type { MaybePromise } from "../../shared/maybe-promise.ts";

/** A vector as callers hand it over: Float32Array (what embedding clients give) or plain numbers. */
export type VectorInput = Float32Array | readonly number[];

export interface VectorQueryOptions {
  /** How many hits at most (the best first). */
  limit: number;
  /** The embedding model whose vectors are searched; vectors of other models are never seen. */
  model: string;
  /**
   * How many shortlisted entries are rescored from their stored int8 vectors (default
   * max(limit × RESCORE_PER_HIT, MIN_RESCORE), see scan.ts): more costs time and buys recall.
   */
  rescore?: number;
}

export interface VectorHit {
  id: string;
  /** Cosine similarity with the query in [-1, 1] (1: same direction), from the int8-stored vector. */
  score: number;
}

export interface VectorEntry {
  id: string;
  vector: VectorInput;
}

/**
 * Embedding vectors kept beside entries of another store (agent memory, issue #35). Vectors live in
 * `index` (a namespace such as "memory") under `scope` (an agent id) with an `id` unique within the
 * scope per `model`: each (scope, id) may hold one vector per embedding model, so a scope can be
 * re-embedded with a new model while the old one still answers. A model has one dimension in an index,
 * fixed by its first vector; any other length is refused, as are non-finite values and zero vectors.
 * A query sees one scope and one model only, and ranks by cosine similarity.
 *
 * Like the TextIndex, a synchronous backend answers reads directly and fails with a rejected promise.
 */
export interface VectorIndex {
  readonly kind: "sqlite" | "postgres";
  /** Stores (or replaces) the vector of `id` for `model`. */
  put(index: string, scope: string, id: string, vector: VectorInput, model: string): MaybePromise<void>;
  /** Several vectors of one scope and model atomically, each as `put` would; a repeated id: the last wins. */
  putMany(index: string, scope: string, model: string, entries: VectorEntry[]): MaybePromise<void>;
  /** Removes the id's vectors of every model; true when there was one. */
  delete(index: string, scope: string, id: string): MaybePromise<boolean>;
  /** Removes every vector of the scope (all models); returns how many there were. */
  deleteScope(index: string, scope: string): MaybePromise<number>;
  /** Removes the scope's vectors of every model but `model` (a re-embedding done); returns how many. */
  deleteOtherModels(index: string, scope: string, model: string): MaybePromise<number>;
  /** The scope's entries nearest to `vector` among `model`'s vectors, best first (ties: by id). */
  query(
    index: string,
    scope: string,
    vector: VectorInput,
    options: VectorQueryOptions,
  ): MaybePromise<VectorHit[]>;
  /** Vectors in the scope: of `model`, or of every model when unset. */
  count(index: string, scope: string, model?: string): MaybePromise<number>;
  /**
   * Those of `ids` that have no vector for `model` in the scope and were not refused for it, in the order
   * given (the embedding queue's work).
   */
  missing(index: string, scope: string, model: string, ids: readonly string[]): MaybePromise<string[]>;
  /**
   * Records that the provider refused to embed these ids for `model` (their content: a policy, a
   * character it rejects), so that `missing` leaves them out: without it the embedding queue would send
   * them again with every batch. A refusal lasts until the id's vectors are deleted (`delete`,
   * `deleteScope`, `deleteOtherModels` for other models); putting a vector does not lift it.
   */
  refuse(index: string, scope: string, model: string, ids: readonly string[]): MaybePromise<void>;
  /** Refused ids in the scope: of `model`, or of every model when unset. */
  refused(index: string, scope: string, model?: string): MaybePromise<number>;
  /** The model's dimension in the index, or null before its first vector. */
  dimensions(index: string, model: string): MaybePromise<number | null>;
  close(): Promise<void>;
}
