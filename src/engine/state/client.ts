import { call } from "../call.ts";
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
  /** The state functions document no answer: a value is what was stored, typed by the code that stored it. */
  const stored = <T>(answer: Promise<unknown>) => answer as Promise<T>;
  const page = <T>(request: { scope: string; prefix?: string; limit?: number; cursor?: string }) =>
    stored<{ items: ListedRecord<T>[]; nextCursor: string | null }>(call(trigger, "state::list", request));

  return {
    get: <T>(scope: string, key: string) => stored<T | null>(call(trigger, "state::get", { scope, key })),
    getVersioned: <T>(scope: string, key: string) =>
      stored<VersionedValue<T> | null>(call(trigger, "state::get", { scope, key, withVersion: true })),
    set: <T>(scope: string, key: string, value: T, expectedVersion?: number) =>
      stored<WriteOutcome<T>>(call(trigger, "state::set", { scope, key, value, expectedVersion })),
    delete: <T>(scope: string, key: string, expectedVersion?: number) =>
      stored<T | null>(call(trigger, "state::delete", { scope, key, expectedVersion })),
    /** Every scope holding at least one key, sorted. */
    groups: () =>
      stored<{ groups: string[] }>(call(trigger, "state::list_groups", {})).then(({ groups }) => groups),
    /** Several writes in one transaction: all or none. */
    batch: (ops: BatchOp[]) =>
      stored<{ results: Array<WriteOutcome<unknown>> }>(call(trigger, "state::batch", { ops })).then(
        ({ results }) => results,
      ),
    update: <T>(scope: string, key: string, ops: UpdateOp[], expectedVersion?: number) =>
      stored<WriteOutcome<T>>(call(trigger, "state::update", { scope, key, ops, expectedVersion })),
    list: <T>(scope: string, options: { prefix?: string; limit?: number; cursor?: string } = {}) =>
      page<T>({ scope, ...options }),
    /**
     * Every record of a scope (optionally under a prefix), page by page. Other work goes on between
     * pages: the embedded store answers at once, so a long scan (a stats rebuild over 500 000 heads, a
     * backfill) otherwise held every request of the process until it ended.
     */
    async *scan<T>(scope: string, prefix?: string): AsyncGenerator<ListedRecord<T>> {
      let cursor: string | undefined;
      do {
        const { items, nextCursor } = await page<T>({ scope, prefix, limit: 1000, cursor });
        yield* items;
        cursor = nextCursor ?? undefined;
        if (cursor) await new Promise((resolve) => setImmediate(resolve));
      } while (cursor);
    },
  };
}

export type StateClient = ReturnType<typeof stateClient>;
