import { AppError } from "../../shared/errors.ts";

/**
 * Rowids: `num × 2^41 + slot`. Each (index, scope) has a number `num` and so one contiguous rowid
 * range, and a document's slot is its creation time in ms since 2020 (the next free one when taken;
 * earlier times take slot 0 onwards), so the rowid alone tells FTS5 both the scope and the age of a
 * match. Up to 2^22 scopes at a time (the numbers of deleted scopes are reused once all were given out).
 */
export const SLOT_BITS = 41n;
export const SLOTS = 1n << SLOT_BITS;
export const MAX_SCOPES = 1n << 22n;
export const SLOT_EPOCH_MS = Date.UTC(2020, 0, 1);
/** Creation times after ~2089 share the top slots; leave room to place them. */
export const LAST_SLOT = SLOTS - (1n << 24n);

/** The last rowid of the scope whose first is `base`. */
export const scopeEnd = (base: bigint): bigint => base + SLOTS - 1n;

/**
 * The last rowid a listing page of the scope at `base` reads, below its cursor. The page statement reads
 * a rowid range: a cursor past the scope's (forged, or of the scope's number before it was deleted and
 * reused) must not reach the scopes numbered after it.
 */
export function lastOnPage(base: bigint, cursor: string | undefined): bigint {
  const end = scopeEnd(base);
  if (cursor === undefined) return end;
  const below = rowidCursor(cursor) - 1n;
  return below < end ? below : end;
}

function rowidCursor(cursor: string): bigint {
  if (!/^[0-9]{1,19}$/.test(cursor))
    throw new AppError("validation", "cursor: not a cursor this listing gave");
  return BigInt(cursor);
}
