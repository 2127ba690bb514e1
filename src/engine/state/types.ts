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
  /** Every scope holding at least one key, sorted (iii's state::list_groups). */
  listScopes(): MaybePromise<string[]>;
  close(): Promise<void>;
}
