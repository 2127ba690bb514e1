import type { TriggerFn } from "../types.ts";
import type { BatchOp } from "./types.ts";
import type { UpdateOp, UpdateOpError } from "./update-ops.ts";

export interface VersionedValue<T> {
  value: T;
  version: number;
  updatedAt: string;
}

export interface ListedRecord<T> {
  key: string;
  value: T;
  version: number;
  updatedAt: string;
}

export interface WriteOutcome<T> {
  old_value: T | null;
  new_value: T;
  version: number;
  errors?: UpdateOpError[];
}

/**
 * The one state access layer for workers: typed wrappers over the state::* functions, so code
 * reads `state.get(scope, key)` and still goes through engine.trigger (local or remote alike).
 */
export function stateClient(trigger: TriggerFn) {
  const call = <T>(function_id: string, payload: Record<string, unknown>) =>
    trigger({ function_id, payload }) as Promise<T>;

  return {
    get: <T>(scope: string, key: string) => call<T | null>("state::get", { scope, key }),
    getVersioned: <T>(scope: string, key: string) =>
      call<VersionedValue<T> | null>("state::get", { scope, key, withVersion: true }),
    set: <T>(scope: string, key: string, value: T, expectedVersion?: number) =>
      call<WriteOutcome<T>>("state::set", { scope, key, value, expectedVersion }),
    delete: <T>(scope: string, key: string, expectedVersion?: number) =>
      call<T | null>("state::delete", { scope, key, expectedVersion }),
    /** Several writes in one transaction: all or none. */
    batch: (ops: BatchOp[]) =>
      call<{ results: Array<WriteOutcome<unknown>> }>("state::batch", { ops }).then(({ results }) => results),
    update: <T>(scope: string, key: string, ops: UpdateOp[], expectedVersion?: number) =>
      call<WriteOutcome<T>>("state::update", { scope, key, ops, expectedVersion }),
    list: <T>(scope: string, options: { prefix?: string; limit?: number; cursor?: string } = {}) =>
      call<{ items: ListedRecord<T>[]; nextCursor: string | null }>("state::list", { scope, ...options }),
    /** Every record of a scope (optionally under a prefix), page by page. */
    async *scan<T>(scope: string, prefix?: string): AsyncGenerator<ListedRecord<T>> {
      let cursor: string | undefined;
      do {
        const page = await call<{ items: ListedRecord<T>[]; nextCursor: string | null }>("state::list", {
          scope,
          prefix,
          limit: 1000,
          cursor,
        });
        yield* page.items;
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    },
  };
}

export type StateClient = ReturnType<typeof stateClient>;
