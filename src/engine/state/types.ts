import type { MaybePromise } from "../../shared/maybe-promise.ts";
import type { UpdateOp, UpdateOpError } from "./update-ops.ts";

export interface StateRecord {
  key: string;
  value: unknown;
  /** 1 on creation, +1 on every write: the compare-and-swap token. */
  version: number;
  updatedAt: string;
}

export interface ListOptions {
  prefix?: string;
  /** Return keys strictly greater than this one. */
  after?: string;
  limit: number;
}

export interface ListPage {
  items: StateRecord[];
  /** The last key returned when more keys follow, else null. */
  lastKey: string | null;
}

export interface WriteResult {
  old: StateRecord | null;
  record: StateRecord;
}

export interface UpdateResult extends WriteResult {
  errors: UpdateOpError[];
}

/** One write of a batch: the same operations, with the same meaning, as the single calls. */
export type BatchOp =
  | { type: "set"; scope: string; key: string; value: unknown; expectedVersion?: number }
  | { type: "update"; scope: string; key: string; ops: UpdateOp[]; expectedVersion?: number }
  | { type: "delete"; scope: string; key: string; expectedVersion?: number };

/** What one write of a batch did: the record before and after (null after a delete or for a missing key). */
export interface BatchOpResult {
  old: StateRecord | null;
  record: StateRecord | null;
  errors?: UpdateOpError[];
}

/**
 * The one storage contract. `expectedVersion` makes a write conditional: it applies only when the
 * stored version equals it (0 = the key must not exist); otherwise the write fails with a conflict.
 * A synchronous backend may answer directly; callers treat every result as MaybePromise.
 */
export interface StateStore {
  readonly kind: "sqlite" | "postgres";
  get(scope: string, key: string): MaybePromise<StateRecord | null>;
  set(scope: string, key: string, value: unknown, expectedVersion?: number): MaybePromise<WriteResult>;
  delete(scope: string, key: string, expectedVersion?: number): MaybePromise<StateRecord | null>;
  list(scope: string, options: ListOptions): MaybePromise<ListPage>;
  update(scope: string, key: string, ops: UpdateOp[], expectedVersion?: number): MaybePromise<UpdateResult>;
  /**
   * Several writes as one transaction: all are applied, in order, or none (a version conflict or an
   * invalid value fails the whole batch, leaving every key as it was).
   */
  batch(ops: BatchOp[]): MaybePromise<BatchOpResult[]>;
  /** Every scope holding at least one key, sorted (iii's state::list_groups). */
  listScopes(): MaybePromise<string[]>;
  close(): Promise<void>;
}
