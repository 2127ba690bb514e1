import type { MaybePromise } from "../../shared/maybe-promise.ts";

/** What an index holds per document: the text to search, and data handed back with each hit. */
export interface TextDoc {
  text: string;
  data: unknown;
  /** ISO 8601; the recency term of the score counts from it. */
  createdAt: string;
}

export interface TextSearchOptions {
  /** How many hits at most (the best first). */
  limit: number;
  /** Age at which the recency boost halves; DEFAULT_RECENCY_HALF_LIFE_MS when unset. */
  recencyHalfLifeMs?: number;
  /**
   * A candidate list for fusion with another (hybrid recall, whose vector list brings the older related
   * entries): an index may bound its work to the newest matches and the older ones holding a rare word
   * instead of ranking every match. PostgreSQL ranks every match either way.
   */
  candidates?: boolean;
}

export interface TextPage {
  items: Array<{ id: string; data: unknown; createdAt: string }>;
  nextCursor: string | null;
}

export interface TextHit {
  id: string;
  data: unknown;
  /** In [0, 1); higher is better (see score.ts). */
  score: number;
  createdAt: string;
}

/**
 * A full-text index in the state backend. Documents live in `index` (a namespace such as "memory")
 * under `scope` (such as an agent id) with an `id` unique within the scope; `put` replaces a document
 * with the same id. A search sees one scope only, and finds it through the index itself, never by
 * scanning. Queries are free text: every word is a search term, any of which may match (OR), and no
 * input is a syntax error. The index keeps the searchable terms, not the text: callers who need the
 * text back keep it in `data`. Like the StateStore, a synchronous backend answers directly and fails
 * with a rejected promise.
 */
export interface TextIndex {
  readonly kind: "sqlite" | "postgres";
  put(index: string, scope: string, id: string, doc: TextDoc): MaybePromise<void>;
  /**
   * Several documents of one scope, each as `put` would (distinct ids), atomically: SQLite writes
   * them in one transaction, PostgreSQL in one statement.
   */
  putMany(index: string, scope: string, docs: Array<{ id: string; doc: TextDoc }>): MaybePromise<void>;
  /** True when the document existed. */
  delete(index: string, scope: string, id: string): MaybePromise<boolean>;
  /** Removes every document of the scope; returns how many there were. */
  deleteScope(index: string, scope: string): MaybePromise<number>;
  search(index: string, scope: string, query: string, options: TextSearchOptions): MaybePromise<TextHit[]>;
  count(index: string, scope: string): MaybePromise<number>;
  /** Those of `ids` that are documents of the scope, in no particular order (ids not there are left out). */
  get(index: string, scope: string, ids: readonly string[]): MaybePromise<TextPage["items"]>;
  /** The scope's documents newest first, a page at a time (`cursor`: the last page's nextCursor). */
  list(index: string, scope: string, page: { limit: number; cursor?: string }): MaybePromise<TextPage>;
  close(): Promise<void>;
}
