import type { DatabaseSync } from "node:sqlite";
import type { Pool, PoolClient } from "pg";
import { underLock } from "../state/postgres.ts";
import { CODE_FORMAT } from "./rotation.ts";
import { storedCode } from "./scan.ts";

/**
 * Stores written before the current CODE_FORMAT (rotation.ts) hold codes of another kind: at open, each
 * backend recomputes them from the int8 vectors it keeps, once, in one transaction, and bumps every
 * scope's counters so that a process still holding old codes in memory reloads them at its next query.
 * The format is recorded in a `vector_meta` row; a new store records it at once.
 */

const BATCH = 1000;

export const SQLITE_META = `CREATE TABLE IF NOT EXISTS vector_meta (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
)`;

/** Told how many codes are about to be recomputed (about 4 s per 100 000 of 1536 dims here). */
export type CodeUpgradeNotice = (codes: number) => void;

/** SQLite: inside the connection's transaction when one is open (the group commit's), else its own. */
export function upgradeSqliteCodes(db: DatabaseSync, notice?: CodeUpgradeNotice): void {
  const format = db.prepare("SELECT value FROM vector_meta WHERE name = 'code_format'");
  const current = () => (format.get() as { value: number } | undefined)?.value;
  if (current() === CODE_FORMAT) return;
  const own = !db.isTransaction;
  if (own) db.exec("BEGIN IMMEDIATE");
  try {
    // Read again under the write lock: another process may have upgraded the file meanwhile.
    if (current() !== CODE_FORMAT) {
      const { n } = db.prepare("SELECT count(*) AS n FROM vector_codes").get() as { n: number };
      if (n > 0) notice?.(n);
      const rows = db.prepare(
        `SELECT c.rowid AS ref, d.vec AS vec FROM vector_codes c JOIN vector_data d ON d.rowid = c.rowid
         WHERE c.rowid > ? ORDER BY c.rowid LIMIT ${BATCH}`,
      );
      const update = db.prepare("UPDATE vector_codes SET code = ? WHERE rowid = ?");
      for (let after = -1; ; ) {
        const batch = rows.all(after) as Array<{ ref: number; vec: Uint8Array }>;
        for (const { ref, vec } of batch) update.run(storedCode(vec), ref);
        if (batch.length < BATCH) break;
        after = batch[batch.length - 1]?.ref ?? after;
      }
      db.exec("UPDATE vector_scopes SET version = version + 1, deletes = deletes + 1");
      db.prepare("INSERT OR REPLACE INTO vector_meta (name, value) VALUES ('code_format', ?)").run(
        CODE_FORMAT,
      );
    }
    if (own) db.exec("COMMIT");
  } catch (error) {
    if (own && db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}

export interface PostgresTables {
  scopes: string;
  entries: string;
  meta: string;
}

export const postgresMeta = (meta: string) =>
  `CREATE TABLE IF NOT EXISTS ${meta} (name text PRIMARY KEY, value integer NOT NULL)`;

/** PostgreSQL: one transaction under an advisory lock, so of the nodes starting together one upgrades. */
export async function upgradePostgresCodes(
  pool: Pool,
  tables: PostgresTables,
  notice?: CodeUpgradeNotice,
): Promise<void> {
  await underLock(pool, "agentos.vector_codes", async (client) => {
    const { rows } = await client.query<{ value: number }>(
      `SELECT value FROM ${tables.meta} WHERE name = 'code_format'`,
    );
    if (rows[0]?.value === CODE_FORMAT) return;
    const counted = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${tables.entries}`);
    const n = Number(counted.rows[0]?.n ?? 0);
    if (n > 0) notice?.(n);
    await recodeEntries(client, tables.entries);
    await client.query(`UPDATE ${tables.scopes} SET version = version + 1, deletes = deletes + 1`);
    await client.query(
      `INSERT INTO ${tables.meta} (name, value) VALUES ('code_format', $1)
       ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      [CODE_FORMAT],
    );
  });
}

type EntryKey = { scope_num: string; id: string; model_num: number };

/** Every entry's code from its int8 vector, in primary-key order, a batch a statement. */
async function recodeEntries(client: PoolClient, entries: string): Promise<void> {
  let after: EntryKey | null = null;
  for (;;) {
    const page: { rows: Array<EntryKey & { vec: Buffer }> } = await client.query(
      `SELECT scope_num, id, model_num, vec FROM ${entries}
       ${after ? "WHERE (scope_num, id, model_num) > ($1, $2, $3)" : ""}
       ORDER BY scope_num, id, model_num LIMIT ${BATCH}`,
      after ? [after.scope_num, after.id, after.model_num] : [],
    );
    if (page.rows.length === 0) return;
    await client.query(
      `UPDATE ${entries} e SET code = u.code
       FROM unnest($1::bigint[], $2::text[], $3::integer[], $4::bytea[]) AS u(scope_num, id, model_num, code)
       WHERE e.scope_num = u.scope_num AND e.id = u.id AND e.model_num = u.model_num`,
      [
        page.rows.map((row) => row.scope_num),
        page.rows.map((row) => row.id),
        page.rows.map((row) => row.model_num),
        page.rows.map((row) => Buffer.from(storedCode(row.vec))),
      ],
    );
    if (page.rows.length < BATCH) return;
    after = page.rows[page.rows.length - 1] ?? null;
  }
}
