import { z } from "zod";
import { searchClient } from "../../../engine/search/client.ts";
import { casUpdate } from "../../../engine/state/cas.ts";
import { stateClient } from "../../../engine/state/client.ts";
import type { TriggerFn } from "../../../engine/types.ts";
import { conflict } from "../../../shared/errors.ts";
import { exceedsDepth } from "../../../shared/json-depth.ts";
import { MAX_METADATA_BYTES } from "../../../shared/limits.ts";

/**
 * What one agent's notes and collections may hold. The model that calls these tools may be steered (a
 * fetched page, a channel user), and each note and document is kept for good: without a bound on their
 * number one agent could fill the disk. Past a bound a store is a 409 naming it, before anything is
 * embedded (paid) or written.
 */
export const MAX_NOTES_PER_AGENT = 1000;
export const MAX_COLLECTIONS_PER_AGENT = 100;
export const MAX_DOCUMENTS_PER_COLLECTION = 10_000;
export const MAX_METADATA_DEPTH = 8;

/** How many keyed notes each agent holds (notes are only ever added or replaced, and go with the agent). */
export const noteCountsScope = "tool_note_counts";

/** A document's metadata: a JSON object of at most MAX_METADATA_BYTES, nested at most MAX_METADATA_DEPTH deep. */
export const documentMetadata = z.record(z.string(), z.unknown()).superRefine((metadata, ctx) => {
  // Measured first: serializing thousands of levels overflows the stack.
  if (exceedsDepth(metadata, MAX_METADATA_DEPTH)) {
    ctx.addIssue({ code: "custom", message: `metadata must nest at most ${MAX_METADATA_DEPTH} levels` });
  } else if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) {
    ctx.addIssue({ code: "custom", message: `metadata must be at most ${MAX_METADATA_BYTES} bytes as JSON` });
  }
});

/**
 * Room for a note under `key`: a key already used is replaced in place; a new one takes one of the
 * agent's MAX_NOTES_PER_AGENT (counted by compare-and-swap, so notes stored at once never pass it;
 * a note whose write then fails leaves its place taken).
 */
export async function takeNoteRoom(
  trigger: TriggerFn,
  notes: string,
  agentId: string,
  key: string,
): Promise<void> {
  const state = stateClient(trigger);
  if (await state.get(notes, key)) return;
  await casUpdate<{ count: number }>(state, noteCountsScope, agentId, ({ value }) => {
    const count = value?.count ?? 0;
    if (count >= MAX_NOTES_PER_AGENT) {
      throw conflict(
        `You hold the most keyed notes an agent may (${MAX_NOTES_PER_AGENT}): store under a key you used before`,
      );
    }
    return { count: count + 1 };
  });
}

/**
 * Room for a document in the agent's collection `namespace`: a collection the agent does not have yet
 * must be within MAX_COLLECTIONS_PER_AGENT, and a new document within MAX_DOCUMENTS_PER_COLLECTION (one
 * with the id of a stored one replaces it). Stores made at once can pass a bound by their number (a
 * turn's parallel tool calls): each checks what was stored before it.
 */
export async function assertCollectionRoom(
  trigger: TriggerFn,
  where: { namespaces: string; namespace: string; index: string; scope: string; id: string | undefined },
): Promise<void> {
  const state = stateClient(trigger);
  if (!(await state.get(where.namespaces, where.namespace))) {
    const { items } = await state.list(where.namespaces, { limit: MAX_COLLECTIONS_PER_AGENT });
    if (items.length >= MAX_COLLECTIONS_PER_AGENT) {
      throw conflict(
        `You have the most collections an agent may (${MAX_COLLECTIONS_PER_AGENT}): store into one of them`,
      );
    }
    return;
  }
  const search = searchClient(trigger);
  // Held near MAX_DOCUMENTS_PER_COLLECTION by this very check, the scope stays cheap to count (SQLite reads it).
  if ((await search.count(where.index, where.scope)) < MAX_DOCUMENTS_PER_COLLECTION) return;
  if (where.id !== undefined && (await search.get(where.index, where.scope, [where.id])).length > 0) return;
  throw conflict(
    `Collection ${where.namespace} holds the most documents a collection may (${MAX_DOCUMENTS_PER_COLLECTION}): delete some first (tool::vector_delete)`,
  );
}
