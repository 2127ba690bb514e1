import { z } from "zod";
import { badRequest } from "./errors.ts";
import { queryInt } from "./query-int.ts";

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 500;

/** `limit` and `cursor` of every paginated list (spread into the list's input schema). */
export const pageFields = {
  limit: queryInt("limit", 1, MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT),
  cursor: z.string({ error: "cursor must be a string" }).min(1).max(1024).optional(),
};

export interface PageRequest {
  limit: number;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  /** Pass as `cursor` for the next page; null on the last one. */
  nextCursor: string | null;
}

/** The cursor names the position after which the next page starts, not an offset: inserts shift nothing. */
/** The cursor of a page whose last item sits at `position` (an ordered list's place, as pageOf writes). */
export function encodeCursor(position: string): string {
  return Buffer.from(JSON.stringify({ after: position })).toString("base64url");
}

/** The position a cursor of encodeCursor names; 400 for anything else. */
export function decodeCursor(cursor: string): string {
  try {
    const decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { after?: unknown };
    if (typeof decoded.after === "string") return decoded.after;
  } catch {
    // Falls through to the 400 below.
  }
  throw badRequest("cursor: not a cursor returned by this listing");
}

/**
 * One page of a list, in the order of `position` (a string per item that sorts as the list does: a
 * time counted down for newest-first lists). Items removed or added between pages neither repeat nor
 * shift the items after the cursor.
 */
export function pageOf<T>(items: T[], position: (item: T) => string, request: PageRequest): Page<T> {
  const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor);
  const ordered = items
    .map((item) => ({ item, at: position(item) }))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const start = after === undefined ? 0 : ordered.findIndex((entry) => entry.at > after);
  const rest = start === -1 ? [] : ordered.slice(start);
  const page = rest.slice(0, request.limit);
  const last = page[page.length - 1];
  return {
    items: page.map((entry) => entry.item),
    nextCursor: rest.length > request.limit && last ? encodeCursor(last.at) : null,
  };
}

/** A position that sorts newest first: the time counted down, then the id. */
export function newestFirst(isoTime: string, id: string): string {
  const inverted = 9_999_999_999_999 - Date.parse(isoTime);
  return `${String(inverted).padStart(13, "0")}\u0000${id}`;
}

/**
 * newestFirst as a state key: `:` between time and id instead of NUL, which no state key may hold
 * (PostgreSQL text cannot). For indexes a listing pages through (runs, sessions).
 */
export function newestFirstKey(isoTime: string, id: string): string {
  return newestFirst(isoTime, id).replace("\u0000", ":");
}

/** A position that sorts oldest first: the time, then the id. */
export function oldestFirst(isoTime: string, id: string): string {
  return `${String(Date.parse(isoTime)).padStart(13, "0")}\u0000${id}`;
}

/**
 * Every item of a paginated list, page by page (a realm export, the model list): `read` asks for
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
