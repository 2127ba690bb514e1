import { createHash } from "node:crypto";
import type { Pool } from "pg";
import { nowMs } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import { createPool, type DatabaseTimeouts, DELETE_CHUNK_ROWS } from "../state/pg-pool.ts";
import { migrate, namedQuery, prepared, qualifiedTable } from "../state/postgres.ts";
import { isStorableText } from "../state/schema.ts";
import { COMMON_TERM_WINDOW, informativeTerms } from "./common-terms.ts";
import { queryTerms } from "./query.ts";
import { DEFAULT_RECENCY_HALF_LIFE_MS, rankScoreSql, type ScoredRow, toHits } from "./score.ts";
import type { TextDoc, TextHit, TextIndex, TextPage, TextSearchOptions } from "./types.ts";
import { documentFields } from "./values.ts";

export interface PostgresTextIndexOptions {
  connectionString: string;
  /** Schema that holds the table, created when missing; without it the connection's search_path decides. */
  schema?: string;
  /** Pool size (pg's default: 10). */
  max?: number;
  /** Time limits of the pool's connections (default DEFAULT_DATABASE_TIMEOUTS). */
  timeouts?: DatabaseTimeouts;
  /** Documents one statement of deleteScope removes at most (default DELETE_CHUNK_ROWS). */
  deleteChunk?: number;
}

/**
 * The word that names a document's (index, scope) inside its tsvector: a search requires it, so the
 * GIN index selects the scope together with the terms. 32 hex digits of a SHA-256 spelled with the
 * letters a–p (one lower-case word to every parser). The query also compares idx and scope, so even
 * a hash collision cannot leak a document.
 */
export function scopeToken(index: string, scope: string): string {
  const hex = createHash("sha256").update(`${index}\u0000${scope}`).digest("hex").slice(0, 32);
  return `z${hex.replace(/[0-9a-f]/g, (digit) => String.fromCharCode(97 + Number.parseInt(digit, 16)))}`;
}

function sqlFor(docs: string, scopes: string, gin: string) {
  return {
    create: [
      `CREATE TABLE IF NOT EXISTS ${docs} (
        idx text COLLATE "C" NOT NULL,
        scope text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        data text NOT NULL,
        created_at text NOT NULL,
        created_ms double precision NOT NULL,
        tsv tsvector NOT NULL,
        PRIMARY KEY (idx, scope, id)
      )`,
      `CREATE INDEX IF NOT EXISTS ${gin} ON ${docs} USING gin (tsv)`,
      // The scope's newest entries, read in order (the common-term window).
      `CREATE INDEX IF NOT EXISTS ${gin}_recent ON ${docs} (idx, scope, created_ms DESC)`,
      // How many documents each scope holds, kept by every write (BM25's N, and count, without a scan).
      `CREATE TABLE IF NOT EXISTS ${scopes} (
        idx text COLLATE "C" NOT NULL,
        scope text COLLATE "C" NOT NULL,
        docs bigint NOT NULL,
        PRIMARY KEY (idx, scope)
      )`,
    ],
    // Each write is one statement and adjusts the scope's count by exactly what it changed itself.
    put: `WITH written AS (
        INSERT INTO ${docs} (idx, scope, id, data, created_at, created_ms, tsv)
        VALUES ($1, $2, $3, $4, $5, $6, to_tsvector('english', $7) || array_to_tsvector(ARRAY[$8::text]))
        ON CONFLICT (idx, scope, id) DO UPDATE SET data = excluded.data, created_at = excluded.created_at,
          created_ms = excluded.created_ms, tsv = excluded.tsv
        RETURNING (xmax = 0) AS inserted
      )
      INSERT INTO ${scopes} AS s (idx, scope, docs) SELECT $1, $2, 1 FROM written WHERE inserted
      ON CONFLICT (idx, scope) DO UPDATE SET docs = s.docs + 1`,
    /**
     * Several documents of one scope in one statement: $3 the scope token, $4–$8 the documents' ids,
     * data, creation times (ISO and ms) and texts (distinct ids). The scope's count grows by the inserted.
     */
    putMany: `WITH written AS (
        INSERT INTO ${docs} (idx, scope, id, data, created_at, created_ms, tsv)
        SELECT $1, $2, u.id, u.data, u.created_at, u.created_ms,
          to_tsvector('english', u.text) || array_to_tsvector(ARRAY[$3::text])
        FROM unnest($4::text[], $5::text[], $6::text[], $7::float8[], $8::text[])
          AS u(id, data, created_at, created_ms, text)
        ON CONFLICT (idx, scope, id) DO UPDATE SET data = excluded.data, created_at = excluded.created_at,
          created_ms = excluded.created_ms, tsv = excluded.tsv
        RETURNING (xmax = 0) AS inserted
      )
      INSERT INTO ${scopes} AS s (idx, scope, docs)
      SELECT $1, $2, count(*) FROM written WHERE inserted HAVING count(*) > 0
      ON CONFLICT (idx, scope) DO UPDATE SET docs = s.docs + excluded.docs`,
    /** $3 the terms (each quoted for to_tsquery), $4 the window: how many of the newest entries hold each. */
    window: `WITH recent AS MATERIALIZED (
        SELECT tsv FROM ${docs} WHERE idx = $1 AND scope = $2 ORDER BY created_ms DESC LIMIT $4
      )
      SELECT (SELECT count(*) FROM recent) AS size,
        array(SELECT (SELECT count(*) FROM recent WHERE recent.tsv @@ to_tsquery('english', t.term))
              FROM unnest($3::text[]) WITH ORDINALITY AS t(term, i) ORDER BY t.i) AS found`,
    delete: deleteSql(docs, scopes, "AND id = $3"),
    /** $3: at most this many of the scope's documents. */
    deleteScope: deleteSql(
      docs,
      scopes,
      `AND id IN (SELECT id FROM ${docs} WHERE idx = $1 AND scope = $2 LIMIT $3)`,
    ),
    count: `SELECT docs AS n FROM ${scopes} WHERE idx = $1 AND scope = $2`,
    /** The documents of $3 (ids) that exist, through the primary key. */
    get: `SELECT id, data, created_at FROM ${docs} WHERE idx = $1 AND scope = $2 AND id = ANY($3::text[])`,
    /** Newest first through the (idx, scope, created_ms) index; $3/$4 the last page's end, $5 limit. */
    page: `SELECT id, data, created_at, created_ms FROM ${docs}
      WHERE idx = $1 AND scope = $2 AND ($3::float8 IS NULL OR (created_ms, id) < ($3::float8, $4::text))
      ORDER BY created_ms DESC, id DESC LIMIT $5`,
    /**
     * $3 scope token, $4 the terms (each quoted for to_tsquery), $5 their OR, $6 now, $7 half-life,
     * $8 limit. `hits` pairs each matching document with each term it holds (the GIN index finds
     * them: scope token, terms and term together) and that term's ts_rank_cd (occurrences, normalised
     * by document length). Relevance = Σ over its terms of BM25's IDF × that rank, with N the scope's
     * size and df the term's documents in the scope (all among the hits).
     */
    search: `WITH terms AS MATERIALIZED (
        SELECT i, q FROM unnest($4::text[]) WITH ORDINALITY AS t(term, i), LATERAL to_tsquery('english', t.term) AS q
        WHERE numnode(q) > 0
      ), hits AS MATERIALIZED (
        SELECT d.id, d.created_ms, t.i, ts_rank_cd('{1,1,1,1}', d.tsv, t.q, 1) AS rank
        FROM ${docs} AS d JOIN terms AS t ON d.tsv @@ t.q
        WHERE d.idx = $1 AND d.scope = $2
          AND d.tsv @@ to_tsquery('simple', $3) AND d.tsv @@ to_tsquery('english', $5)
      ), weighted AS MATERIALIZED (
        SELECT h.i, ln(1 + (greatest(s.n, count(*)) - count(*) + 0.5) / (count(*) + 0.5)) AS idf
        FROM hits AS h
        CROSS JOIN (SELECT coalesce(max(docs), 0)::float8 AS n FROM ${scopes} WHERE idx = $1 AND scope = $2) AS s
        GROUP BY h.i, s.n
      ), scored AS MATERIALIZED (
        SELECT h.id, h.created_ms, sum(w.idf * h.rank) AS relevance
        FROM hits AS h JOIN weighted AS w ON w.i = h.i
        GROUP BY h.id, h.created_ms
      ), best AS (
        SELECT id, relevance FROM scored
        ORDER BY ${rankScoreSql("relevance", "created_ms", "$6::float8", "$7::float8")} DESC, created_ms DESC, id
        LIMIT $8
      )
      SELECT d.id, d.data, d.created_at, d.created_ms, b.relevance
      FROM best AS b JOIN ${docs} AS d ON d.idx = $1 AND d.scope = $2 AND d.id = b.id`,
  };
}

function deleteSql(docs: string, scopes: string, andId: string): string {
  return `WITH gone AS (DELETE FROM ${docs} WHERE idx = $1 AND scope = $2 ${andId} RETURNING 1),
    counted AS (
      UPDATE ${scopes} SET docs = docs - (SELECT count(*) FROM gone)
      WHERE idx = $1 AND scope = $2 AND EXISTS (SELECT 1 FROM gone)
    )
    SELECT count(*) AS n FROM gone`;
}

type Statement = Exclude<keyof ReturnType<typeof sqlFor>, "create">;

/**
 * The cluster text index: PostgreSQL full-text search with the 'english' configuration (stemming,
 * stop words), a tsvector per document (computed on write; the text itself is not kept) and a GIN
 * index over it. Every statement is one round trip, atomic on its own.
 */
export class PostgresTextIndex implements TextIndex {
  readonly kind = "postgres";
  private readonly pool: Pool;
  private readonly schema: string | undefined;
  private readonly sql: ReturnType<typeof sqlFor>;
  private closed = false;
  private readonly deleteChunk: number;

  /** Prefer `open`, which also creates the table. */
  constructor(options: PostgresTextIndexOptions) {
    this.deleteChunk = options.deleteChunk ?? DELETE_CHUNK_ROWS;
    this.pool = createPool(options.connectionString, options);
    this.schema = options.schema;
    this.sql = sqlFor(
      qualifiedTable(options.schema, "search_docs"),
      qualifiedTable(options.schema, "search_scopes"),
      "search_docs_tsv",
    );
  }

  static async open(options: PostgresTextIndexOptions): Promise<PostgresTextIndex> {
    const index = new PostgresTextIndex(options);
    return prepared(index, () => migrate(index.pool, index.schema, index.sql.create));
  }

  async put(index: string, scope: string, id: string, doc: TextDoc): Promise<void> {
    const { data, createdMs } = documentFields(doc);
    await this.write("put", [
      index,
      scope,
      id,
      data,
      doc.createdAt,
      createdMs,
      doc.text,
      scopeToken(index, scope),
    ]);
  }

  async putMany(index: string, scope: string, docs: Array<{ id: string; doc: TextDoc }>): Promise<void> {
    // One statement for the lot (a round trip and a GIN update per document made bulk fills crawl).
    // Ids are meant to be distinct; should one repeat, the last document wins, as with puts in order.
    const byId = new Map<string, TextDoc>();
    for (const { id, doc } of docs) {
      byId.delete(id);
      byId.set(id, doc);
    }
    if (byId.size === 0) return;
    const columns = {
      ids: [] as string[],
      data: [] as string[],
      at: [] as string[],
      ms: [] as number[],
      texts: [] as string[],
    };
    // In one order for every writer (code point order), so batches sharing ids lock them alike.
    const ordered = [...byId].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const [id, doc] of ordered) {
      const { data, createdMs } = documentFields(doc);
      columns.ids.push(id);
      columns.data.push(data);
      columns.at.push(doc.createdAt);
      columns.ms.push(createdMs);
      columns.texts.push(doc.text);
    }
    await this.write("putMany", [
      index,
      scope,
      scopeToken(index, scope),
      columns.ids,
      columns.data,
      columns.at,
      columns.ms,
      columns.texts,
    ]);
  }

  async delete(index: string, scope: string, id: string): Promise<boolean> {
    return (await this.number("delete", [index, scope, id], true)) > 0;
  }

  /** Every document of the scope, DELETE_CHUNK_ROWS a statement (so none passes the statement timeout). */
  async deleteScope(index: string, scope: string): Promise<number> {
    let total = 0;
    for (;;) {
      const gone = await this.number("deleteScope", [index, scope, this.deleteChunk], true);
      total += gone;
      if (gone < this.deleteChunk) return total;
    }
  }

  async count(index: string, scope: string): Promise<number> {
    return this.number("count", [index, scope]);
  }

  /** The documents among `ids` that exist, in no particular order. */
  async get(index: string, scope: string, ids: readonly string[]): Promise<TextPage["items"]> {
    if (ids.length === 0) return [];
    const rows = await this.query<{ id: string; data: string; created_at: string }>("get", [
      index,
      scope,
      [...ids],
    ]);
    return rows.map((row) => ({ id: row.id, data: JSON.parse(row.data), createdAt: row.created_at }));
  }

  async list(index: string, scope: string, page: { limit: number; cursor?: string }): Promise<TextPage> {
    const after = page.cursor === undefined ? null : pageCursor(page.cursor);
    const rows = await this.query<{ id: string; data: string; created_at: string; created_ms: number }>(
      "page",
      [index, scope, after?.ms ?? null, after?.id ?? null, page.limit + 1],
    );
    const shown = rows.slice(0, page.limit);
    const end = shown.at(-1);
    return {
      items: shown.map((row) => ({ id: row.id, data: JSON.parse(row.data), createdAt: row.created_at })),
      nextCursor:
        rows.length > page.limit && end
          ? Buffer.from(JSON.stringify([end.created_ms, end.id])).toString("base64url")
          : null,
    };
  }

  async search(index: string, scope: string, query: string, options: TextSearchOptions): Promise<TextHit[]> {
    const terms = await this.informative(
      index,
      scope,
      queryTerms(query).map((term) => `'${term}'`),
    );
    if (terms.length === 0) return [];
    const now = nowMs();
    const halfLife = options.recencyHalfLifeMs ?? DEFAULT_RECENCY_HALF_LIFE_MS;
    const rows = await this.query<ScoredRow>("search", [
      index,
      scope,
      scopeToken(index, scope),
      terms,
      terms.join(" | "),
      now,
      halfLife,
      options.limit,
    ]);
    return toHits(rows, options.limit, now, halfLife);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  /** The terms worth ranking by (see common-terms.ts), counted in the scope's newest entries. */
  private async informative(index: string, scope: string, terms: string[]): Promise<string[]> {
    if (terms.length === 0) return terms;
    const [row] = await this.query<{ size: string; found: string[] }>("window", [
      index,
      scope,
      terms,
      COMMON_TERM_WINDOW,
    ]);
    return informativeTerms(terms, Number(row?.size ?? 0), (row?.found ?? []).map(Number));
  }

  /** The `n` of a statement's one row (pg returns bigint as a string); 0 without a row. */
  private async number(statement: Statement, values: unknown[], writes = false): Promise<number> {
    const rows = await (writes
      ? this.write<{ n: string }>(statement, values)
      : this.query<{ n: string }>(statement, values));
    return rows.length === 0 ? 0 : Number(rows[0].n);
  }

  /**
   * A write statement, run again when PostgreSQL ended it for a deadlock (a scope's delete meeting a
   * batch over the same documents in another order): each is one statement, rolled back whole, so
   * running it again is what it would have done.
   */
  private async write<T extends object>(statement: Statement, values: unknown[]): Promise<T[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.query<T>(statement, values);
      } catch (error) {
        if ((error as { code?: string }).code !== DEADLOCK || attempt >= DEADLOCK_ATTEMPTS) throw error;
      }
    }
  }

  private query<T extends object>(statement: Statement, values: unknown[]): Promise<T[]> {
    return namedQuery<T>(this.pool, `agentos_search_${statement}`, this.sql[statement], values);
  }
}

const DEADLOCK = "40P01";
const DEADLOCK_ATTEMPTS = 5;

function pageCursor(cursor: string): { ms: number; id: string } {
  try {
    const [ms, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [unknown, unknown];
    // Checked as ids are stored: PostgreSQL refuses a NUL in a parameter as a failed statement.
    if (typeof ms === "number" && Number.isFinite(ms) && typeof id === "string" && isStorableText(id)) {
      return { ms, id };
    }
  } catch {
    // Not ours: refused below.
  }
  throw new AppError("validation", "cursor: not a cursor this listing gave");
}
