import type { SearchClient } from "../../engine/search/client.ts";
import type { VectorClient } from "../../engine/vector/client.ts";
import { MEMORY_INDEX, type MemoryEntry } from "./schema.ts";

/** Entries listed per page of a scan (search::list's most). */
const PAGE = 200;

export interface ScanStep {
  /** Entries without a vector for the model, newest first, at most the number asked. */
  found: Array<{ id: string; content: string }>;
  /** Where the next step goes on; null: the pass reached the oldest entry. */
  cursor: string | null;
}

/**
 * One step of a pass over an agent's memory, newest first from `cursor` (undefined: the newest), for
 * entries that vector::missing reports for `model`: it pages on until it holds `want` of them or reaches
 * the end. A pass walks each entry once, so re-embedding a large memory costs one listing, not one per
 * batch. `skip`: ids already on their way (not counted again).
 */
export async function scanMissing(
  deps: { search: SearchClient; vectors: VectorClient },
  agentId: string,
  model: string,
  want: number,
  cursor: string | undefined,
  skip: ReadonlySet<string> = new Set(),
): Promise<ScanStep> {
  const found: ScanStep["found"] = [];
  let next: string | undefined = cursor;
  do {
    const page = await deps.search.list<MemoryEntry>(MEMORY_INDEX, agentId, {
      limit: PAGE,
      ...(next ? { cursor: next } : {}),
    });
    const fresh = page.items.filter((item) => !skip.has(item.id));
    const missing = new Set(
      fresh.length > 0
        ? await deps.vectors.missing(
            MEMORY_INDEX,
            agentId,
            model,
            fresh.map((item) => item.id),
          )
        : [],
    );
    for (const item of fresh) {
      if (missing.has(item.id)) found.push({ id: item.id, content: item.data.content });
    }
    next = page.nextCursor ?? undefined;
    // A page is taken whole (its missing entries all kept): the cursor never lands inside one.
  } while (next && found.length < want);
  return { found, cursor: next ?? null };
}
