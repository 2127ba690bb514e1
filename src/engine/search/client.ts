import type { TriggerFn } from "../types.ts";
import type { TextHit, TextSearchOptions } from "./types.ts";

export interface SearchHit<T> extends TextHit {
  data: T;
}

/** Typed wrappers over the search::* functions, so workers read `search.query(...)` and still go through trigger. */
export function searchClient(trigger: TriggerFn) {
  const call = <T>(function_id: string, payload: Record<string, unknown>) =>
    trigger({ function_id, payload }) as Promise<T>;

  return {
    put: (
      index: string,
      scope: string,
      id: string,
      doc: { text: string; data?: unknown; createdAt?: string },
    ) => call<{ id: string; createdAt: string }>("search::put", { index, scope, id, ...doc }),
    putMany: (
      index: string,
      scope: string,
      docs: Array<{ id: string; text: string; data?: unknown; createdAt?: string }>,
    ) => call<{ docs: Array<{ id: string; createdAt: string }> }>("search::put_many", { index, scope, docs }),
    delete: (index: string, scope: string, id: string) =>
      call<{ deleted: boolean }>("search::delete", { index, scope, id }),
    deleteScope: (index: string, scope: string) =>
      call<{ deleted: number }>("search::delete_scope", { index, scope }),
    list: <T>(index: string, scope: string, page: { limit?: number; cursor?: string } = {}) =>
      call<{ items: Array<{ id: string; data: T; createdAt: string }>; nextCursor: string | null }>(
        "search::list",
        { index, scope, ...page },
      ),
    count: (index: string, scope: string) =>
      call<{ count: number }>("search::count", { index, scope }).then(({ count }) => count),
    get: <T>(index: string, scope: string, ids: readonly string[]) =>
      call<{ items: Array<{ id: string; data: T; createdAt: string }> }>("search::get", {
        index,
        scope,
        ids: [...ids],
      }).then(({ items }) => items),
    query: <T>(
      index: string,
      scope: string,
      query: string,
      options: Pick<TextSearchOptions, "recencyHalfLifeMs" | "candidates"> & { limit?: number } = {},
    ) => call<{ results: SearchHit<T>[] }>("search::query", { index, scope, query, ...options }),
  };
}

export type SearchClient = ReturnType<typeof searchClient>;
