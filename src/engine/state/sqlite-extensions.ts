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

/**
 * Whether agentos_bm25 (native/fts5-rank.c) is loaded and takes the weighing phrases' count and the
 * floor (an extension built before it did answers with an error): asked once, on a temporary table.
 */
export function rankExtensionReady(db: DatabaseSync): boolean {
  try {
    db.exec(`DROP TABLE IF EXISTS temp.agentos_rank_probe;
             CREATE VIRTUAL TABLE temp.agentos_rank_probe USING fts5(text);
             INSERT INTO temp.agentos_rank_probe (text) VALUES ('probe')`);
    const row = db
      .prepare(
        `SELECT agentos_bm25(agentos_rank_probe, '1', 1, 0) AS relevance FROM temp.agentos_rank_probe
         WHERE agentos_rank_probe MATCH '(probe) AND (probe)'`,
      )
      .get() as { relevance: unknown } | undefined;
    return typeof row?.relevance === "number";
  } catch {
    return false;
  } finally {
    db.exec("DROP TABLE IF EXISTS temp.agentos_rank_probe");
  }
}

function warnOnce(why: string): void {
  if (warned) return;
  warned = true;
  process.emitWarning(`${why}; the text index ranks with bm25(), which is slow with many agents`);
}
