import { isFunctionNotFound } from "../../shared/errors.ts";
import { MAX_PAGE_LIMIT } from "../../shared/pagination.ts";

/** The call's answer, or `fallback` when its worker is not running (a worker is optional). */
export async function optional<T>(pending: Promise<T>, fallback: T): Promise<T> {
  try {
    return await pending;
  } catch (error) {
    if (isFunctionNotFound(error)) return fallback;
    throw error;
  }
}

/**
 * Every item of a paginated list, page by page (a realm export needs the whole list): `read` asks for
 * one page, `items` takes the list out of its answer.
 */
export async function allPages<Answer extends { nextCursor: string | null }, Item>(
  read: (page: { limit: number; cursor?: string }) => Promise<Answer>,
  items: (answer: Answer) => Item[],
): Promise<Item[]> {
  const all: Item[] = [];
  let cursor: string | undefined;
  do {
    const answer = await read({ limit: MAX_PAGE_LIMIT, ...(cursor ? { cursor } : {}) });
    all.push(...items(answer));
    cursor = answer.nextCursor ?? undefined;
  } while (cursor);
  return all;
}
