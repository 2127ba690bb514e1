import { existsSync } from "node:fs";
import type { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";

/** The text index's ranking function agentos_bm25 (native/fts5-rank.c, built by `npm install`). */
export const RANK_EXTENSION = fileURLToPath(new URL("../../../dist/native/agentos-rank.so", import.meta.url));

let warned = false;

/**
 * Loads the service's SQLite extensions into a connection opened with `allowExtension`, then turns
 * extension loading off, so no SQL can load a library later. A missing or unloadable extension is
 * warned about once per process: the text index then ranks with FTS5's bm25() (same order, slower
 * with many agents, see fts5-rank.c).
 */
export function loadExtensions(db: DatabaseSync): void {
  try {
    if (existsSync(RANK_EXTENSION)) db.loadExtension(RANK_EXTENSION);
    else warnOnce(`${RANK_EXTENSION} is not built (npm install builds it)`);
  } catch (error) {
    warnOnce(`${RANK_EXTENSION} does not load: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    db.enableLoadExtension(false);
  }
}

function warnOnce(why: string): void {
  if (warned) return;
  warned = true;
  process.emitWarning(`${why}; the text index ranks with bm25(), which is slow with many agents`);
}
