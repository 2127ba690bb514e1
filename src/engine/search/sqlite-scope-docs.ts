import type { DatabaseSync, StatementSync } from "node:sqlite";
import { SLOT_BITS, SLOTS } from "./sqlite-rowids.ts";

/**
 * Per-scope document counts: `search_scopes.docs`, so `count` reads one row instead of counting the
 * scope's rowid range (about 0.3 s of a blocked event loop at 1 M entries). Every write of the index
 * adjusts it in its own transaction, by what it changed (a batch once; a replacement not at all; a
 * scope delete drops the row). A scope whose `docs` is NULL is not counted yet: `count` counts its
 * range. (Triggers on search_docs would also count the writes of code that knows nothing of the
 * column, but putMany into a 1 M-entry file ran about 3× slower with them.)
 *
 * At open, files from before the column get it (NULL in every scope), and each uncounted scope is
 * counted in one statement of its own: a scope counted stays counted, so an interrupted start-up
 * resumes where it stopped, and processes opening the file at once need no lock between them (the
 * `docs IS NULL` of each step makes a repeat harmless). A scope made by older code since is NULL too.
 * Older code writing a scope already counted would leave its count wrong: it does keep
 * `search_meta.docs` (every document of the table), so a sum of the counts that differs from it sends
 * every scope to be counted again.
 */
export function keepScopeCounts(db: DatabaseSync): void {
  const column = db.prepare("SELECT 1 FROM pragma_table_info('search_scopes') WHERE name = 'docs'").get();
  if (!column) {
    try {
      db.exec("ALTER TABLE search_scopes ADD COLUMN docs INTEGER");
    } catch (error) {
      // Another process added it meanwhile.
      if (!/duplicate column/.test(String((error as Error).message))) throw error;
    }
  }
  // Finds the scopes left to count without reading the others.
  db.exec("CREATE INDEX IF NOT EXISTS search_scopes_uncounted ON search_scopes (num) WHERE docs IS NULL");
  const statements = {
    uncounted: db.prepare("SELECT num FROM search_scopes WHERE docs IS NULL"),
    // One statement per scope, atomic (no write of another process falls between the count and its
    // keeping); `docs IS NULL` again, since the number may have been deleted and given out meanwhile.
    count: db.prepare(
      `UPDATE search_scopes SET docs = (SELECT count(*) FROM search_docs WHERE rowid BETWEEN ?1 AND ?2)
       WHERE num = ?3 AND docs IS NULL`,
    ),
    // One statement, so one snapshot of counts that writers keep together.
    check: db.prepare(
      `SELECT (SELECT value FROM search_meta WHERE key = 'docs') AS total,
         (SELECT total(docs) FROM search_scopes) AS kept,
         EXISTS (SELECT 1 FROM search_scopes WHERE docs IS NULL) AS uncounted`,
    ),
  };
  statements.uncounted.setReadBigInts(true);
  countUncounted(statements);
  const { total, kept, uncounted } = statements.check.get() as {
    total: number;
    kept: number;
    uncounted: number;
  };
  if (uncounted || Number(total) === Number(kept)) return;
  db.exec("UPDATE search_scopes SET docs = NULL");
  countUncounted(statements);
  // The table's own count, in case it was wrong instead (nothing else reads it): not counted again at each open.
  db.exec("UPDATE search_meta SET value = (SELECT count(*) FROM search_docs) WHERE key = 'docs'");
}

function countUncounted(statements: { uncounted: StatementSync; count: StatementSync }): void {
  for (const { num } of statements.uncounted.all() as Array<{ num: bigint }>) {
    const base = num << SLOT_BITS;
    statements.count.run(base, base + SLOTS - 1n, num);
  }
}
