import type { Pool } from "pg";
import { badRequest } from "../../shared/errors.ts";
import { createPool, type DatabaseTimeouts, DELETE_CHUNK_ROWS } from "../state/pg-pool.ts";
import { migrate, namedQuery, prepared, qualifiedTable } from "../state/postgres.ts";
import {
  type CodeUpgradeNotice,
  type PostgresTables,
  postgresMeta,
  upgradePostgresCodes,
} from "./code-upgrade.ts";
import {
  CodeCache,
  CodeSet,
  DEFAULT_CACHE_BYTES,
  followWrite,
  refreshPlan,
  type ScopeVersion,
} from "./codes.ts";
import { best, int8Cosine, passSizes, shortlist, unitVector } from "./scan.ts";
import type { VectorEntry, VectorHit, VectorIndex, VectorInput, VectorQueryOptions } from "./types.ts";
import { checkName, checkScope, encodeEntries } from "./values.ts";

export interface PostgresVectorIndexOptions {
  connectionString: string;
  /** Schema that holds the tables, created when missing; without it the connection's search_path decides. */
  schema?: string;
  /** Pool size (pg's default: 10). */
  max?: number;
  /** Time limits of the pool's connections (default DEFAULT_DATABASE_TIMEOUTS). */
  timeouts?: DatabaseTimeouts;
  /** Ids one statement of deleteScope removes at most (default DELETE_CHUNK_ROWS). */
  deleteChunk?: number;
  cacheBytes?: number;
  /** Told before codes of an older format are recomputed (code-upgrade.ts). */
  onCodeUpgrade?: CodeUpgradeNotice;
}

function sqlFor({ scopes, entries, meta }: PostgresTables, models: string, refusals: string) {
  // Locks the scope row before anything else, as every write does: writers of a scope queue on it, so
  // versions (and seqs) are taken in commit order and a reader's "seq > version" misses nothing.
  const lockScope = `SELECT num FROM ${scopes} WHERE idx = $1 AND scope = $2 FOR UPDATE`;
  const deleted = (andId: string) => `WITH s AS (${lockScope}),
      gone AS (DELETE FROM ${entries} WHERE scope_num = (SELECT num FROM s) ${andId} RETURNING 1),
      bumped AS (
        UPDATE ${scopes} SET version = version + 1, deletes = deletes + 1
        WHERE num = (SELECT num FROM s) AND EXISTS (SELECT 1 FROM gone) RETURNING version, deletes
      )
      SELECT (SELECT count(*) FROM gone) AS n, (SELECT version FROM bumped) AS version,
        (SELECT deletes FROM bumped) AS deletes`;
  return {
    create: [
      `CREATE TABLE IF NOT EXISTS ${scopes} (
        num bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        idx text COLLATE "C" NOT NULL,
        scope text COLLATE "C" NOT NULL,
        version bigint NOT NULL,
        deletes bigint NOT NULL,
        UNIQUE (idx, scope)
      )`,
      `CREATE TABLE IF NOT EXISTS ${models} (
        num integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        idx text COLLATE "C" NOT NULL,
        model text COLLATE "C" NOT NULL,
        dims integer NOT NULL,
        UNIQUE (idx, model)
      )`,
      // The int8 vector goes out of line (TOAST, uncompressed: it does not compress) and the code stays
      // in the row, so loading a scope's codes reads a heap of small rows, not every vector.
      `CREATE TABLE IF NOT EXISTS ${entries} (
        scope_num bigint NOT NULL,
        model_num integer NOT NULL,
        id text COLLATE "C" NOT NULL,
        seq bigint NOT NULL,
        code bytea NOT NULL,
        vec bytea NOT NULL,
        PRIMARY KEY (scope_num, id, model_num)
      ) WITH (toast_tuple_target = 128)`,
      `ALTER TABLE ${entries} ALTER COLUMN code SET STORAGE PLAIN, ALTER COLUMN vec SET STORAGE EXTERNAL`,
      // Index names take the table's schema: they must not be qualified.
      `CREATE INDEX IF NOT EXISTS vector_entries_seq ON ${entries} (scope_num, model_num, seq)`,
      postgresMeta(meta),
      // Keyed by name, not by scope number: refusing makes no scope row (nor moves its counters).
      `CREATE TABLE IF NOT EXISTS ${refusals} (
        idx text COLLATE "C" NOT NULL,
        scope text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        model text COLLATE "C" NOT NULL,
        PRIMARY KEY (idx, scope, id, model)
      )`,
    ],
    scope: `SELECT num, version, deletes FROM ${scopes} WHERE idx = $1 AND scope = $2`,
    model: `SELECT num, dims FROM ${models} WHERE idx = $1 AND model = $2`,
    addModel: `INSERT INTO ${models} (idx, model, dims) VALUES ($1, $2, $3)
      ON CONFLICT (idx, model) DO UPDATE SET dims = ${models}.dims RETURNING num, dims`,
    /** $3 model number, $4–$6 ids, codes, vectors: one statement, every row with the new version as seq. */
    putMany: `WITH s AS (
        INSERT INTO ${scopes} AS s (idx, scope, version, deletes) VALUES ($1, $2, 1, 0)
        ON CONFLICT (idx, scope) DO UPDATE SET version = s.version + 1 RETURNING num, version, deletes
      ), w AS (
        INSERT INTO ${entries} (scope_num, model_num, id, seq, code, vec)
        SELECT s.num, $3, u.id, s.version, u.code, u.vec
        FROM s, unnest($4::text[], $5::bytea[], $6::bytea[]) AS u(id, code, vec)
        ON CONFLICT (scope_num, id, model_num) DO UPDATE SET seq = excluded.seq, code = excluded.code,
          vec = excluded.vec
      )
      SELECT num, version, deletes FROM s`,
    delete: deleted("AND id = $3"),
    /** $3: at most this many of the scope's ids (each with its vectors of every model). */
    deleteScope: deleted(
      `AND id IN (SELECT id FROM ${entries} WHERE scope_num = (SELECT num FROM s) LIMIT $3)`,
    ),
    /** $3 the model number kept (-1: none). */
    deleteOtherModels: deleted("AND model_num <> $3"),
    load: `SELECT id, code FROM ${entries} WHERE scope_num = $1 AND model_num = $2`,
    since: `SELECT id, code FROM ${entries} WHERE scope_num = $1 AND model_num = $2 AND seq > $3`,
    vecs: `SELECT id, vec FROM ${entries} WHERE scope_num = $1 AND id = ANY($3::text[]) AND model_num = $2`,
    countAll: `SELECT count(*) AS n FROM ${entries}
      WHERE scope_num = (SELECT num FROM ${scopes} WHERE idx = $1 AND scope = $2)`,
    refuse: `INSERT INTO ${refusals} (idx, scope, id, model) SELECT $1, $2, u.id, $3
      FROM unnest($4::text[]) AS u(id) ON CONFLICT DO NOTHING`,
    refusedOf: `SELECT id FROM ${refusals} WHERE idx = $1 AND scope = $2 AND model = $3 AND id = ANY($4::text[])`,
    refusedCount: `SELECT count(*) AS n FROM ${refusals}
      WHERE idx = $1 AND scope = $2 AND ($3::text IS NULL OR model = $3)`,
    unrefuseId: `DELETE FROM ${refusals} WHERE idx = $1 AND scope = $2 AND id = $3`,
    unrefuseScope: `DELETE FROM ${refusals} WHERE idx = $1 AND scope = $2`,
    unrefuseOthers: `DELETE FROM ${refusals} WHERE idx = $1 AND scope = $2 AND model <> $3`,
  };
}

type Statement = Exclude<keyof ReturnType<typeof sqlFor>, "create">;
interface Model {
  num: number;
  dims: number;
}
/** pg returns bigint as text. */
type ScopeRow = { num: string; version: string; deletes: string };
const version = (row: ScopeRow): ScopeVersion => ({
  version: Number(row.version),
  deletes: Number(row.deletes),
});

/**
 * The cluster vector index. Each node caches scopes' codes (codes.ts) and checks the scope's counters
 * with one indexed read per query, fetching only rows written since (or reloading after a delete), so
 * every node sees every node's writes. pgvector is not used: not available where this runs (README).
 */
export class PostgresVectorIndex implements VectorIndex {
  readonly kind = "postgres";
  private readonly pool: Pool;
  private readonly schema: string | undefined;
  private readonly tables: PostgresTables;
  private readonly sql: ReturnType<typeof sqlFor>;
  private readonly cache: CodeCache;
  private readonly models = new Map<string, Model>();
  /** Whole-scope loads under way, so concurrent queries of a cold scope load it once. */
  private readonly loading = new Map<string, Promise<void>>();
  private closed = false;

  private readonly deleteChunk: number;

  constructor(options: PostgresVectorIndexOptions) {
    this.deleteChunk = options.deleteChunk ?? DELETE_CHUNK_ROWS;
    this.pool = createPool(options.connectionString, options);
    this.schema = options.schema;
    this.cache = new CodeCache(options.cacheBytes ?? DEFAULT_CACHE_BYTES);
    this.tables = {
      scopes: qualifiedTable(options.schema, "vector_scopes"),
      entries: qualifiedTable(options.schema, "vector_entries"),
      meta: qualifiedTable(options.schema, "vector_meta"),
    };
    this.sql = sqlFor(
      this.tables,
      qualifiedTable(options.schema, "vector_models"),
      qualifiedTable(options.schema, "vector_refusals"),
    );
  }

  static async open(options: PostgresVectorIndexOptions): Promise<PostgresVectorIndex> {
    const index = new PostgresVectorIndex(options);
    return prepared(index, async () => {
      await migrate(index.pool, index.schema, index.sql.create);
      await upgradePostgresCodes(index.pool, index.tables, options.onCodeUpgrade);
    });
  }

  async put(index: string, scope: string, id: string, vector: VectorInput, model: string): Promise<void> {
    await this.putMany(index, scope, model, [{ id, vector }]);
  }

  async putMany(index: string, scope: string, model: string, entries: VectorEntry[]): Promise<void> {
    checkScope(index, scope, model);
    const known = await this.model(index, model);
    const encoded = encodeEntries(entries, known?.dims ?? null);
    if (encoded.length === 0) return;
    const found = known ?? (await this.addModel(index, model, encoded[0].vec.length - 4));
    const [row] = await this.run<ScopeRow>("putMany", [
      index,
      scope,
      found.num,
      encoded.map((entry) => entry.id),
      encoded.map((entry) => Buffer.from(entry.code)),
      encoded.map((entry) => Buffer.from(entry.vec)),
    ]);
    followWrite(this.cache.ofScope(index, scope), version(row), false, (set) => {
      if (set.model === model) for (const { id, code } of encoded) set.upsert({ id, ref: 0, code });
    });
  }

  async delete(index: string, scope: string, id: string): Promise<boolean> {
    checkScope(index, scope);
    checkName("id", id);
    await this.run("unrefuseId", [index, scope, id]);
    const [row] = await this.run<ScopeRow & { n: string }>("delete", [index, scope, id]);
    if (Number(row.n) === 0) return false;
    followWrite(this.cache.ofScope(index, scope), version(row), true, (set) => set.remove(id));
    return true;
  }

  async deleteScope(index: string, scope: string): Promise<number> {
    checkScope(index, scope);
    await this.run("unrefuseScope", [index, scope]);
    let total = 0;
    for (;;) {
      const [row] = await this.run<{ n: string }>("deleteScope", [index, scope, this.deleteChunk]);
      this.cache.dropScope(index, scope);
      const gone = Number(row.n);
      total += gone;
      // A chunk counts rows (one per model), its limit ids: fewer rows than the limit means none is left.
      if (gone < this.deleteChunk) return total;
    }
  }

  async deleteOtherModels(index: string, scope: string, model: string): Promise<number> {
    checkScope(index, scope, model);
    const keep = (await this.model(index, model))?.num ?? -1;
    await this.run("unrefuseOthers", [index, scope, model]);
    const [row] = await this.run<{ n: string }>("deleteOtherModels", [index, scope, keep]);
    this.cache.dropScope(index, scope);
    return Number(row.n);
  }

  async query(
    index: string,
    scope: string,
    vector: VectorInput,
    options: VectorQueryOptions,
  ): Promise<VectorHit[]> {
    checkScope(index, scope, options.model);
    const found = await this.model(index, options.model);
    const unit = unitVector(vector, found?.dims);
    const current = found && (await this.current(index, scope, options.model, found));
    if (!current || current.set.count === 0) return [];
    const { set, num } = current;
    const slots = shortlist(set, unit, passSizes(options.limit, options.rescore));
    const ids = Array.from(slots, (slot) => set.ids[slot]);
    const rows = await this.run<{ id: string; vec: Buffer }>("vecs", [num, found.num, ids]);
    // A row deleted since the codes were read is simply not found: it is not a hit.
    const hits = rows.map((row) => ({ id: row.id, score: int8Cosine(unit, row.vec) }));
    return best(hits, options.limit);
  }

  async count(index: string, scope: string, model?: string): Promise<number> {
    checkScope(index, scope, model);
    if (model === undefined) return Number((await this.run<{ n: string }>("countAll", [index, scope]))[0].n);
    const found = await this.model(index, model);
    const current = found && (await this.current(index, scope, model, found));
    return current ? current.set.count : 0;
  }

  async missing(index: string, scope: string, model: string, ids: readonly string[]): Promise<string[]> {
    checkScope(index, scope, model);
    const found = await this.model(index, model);
    const current = found && (await this.current(index, scope, model, found));
    const without = current ? ids.filter((id) => !current.set.has(id)) : [...ids];
    if (without.length === 0) return without;
    const refused = await this.run<{ id: string }>("refusedOf", [index, scope, model, without]);
    if (refused.length === 0) return without;
    const left = new Set(refused.map(({ id }) => id));
    return without.filter((id) => !left.has(id));
  }

  async refuse(index: string, scope: string, model: string, ids: readonly string[]): Promise<void> {
    checkScope(index, scope, model);
    for (const id of ids) checkName("id", id);
    if (ids.length > 0) await this.run("refuse", [index, scope, model, [...ids]]);
  }

  async refused(index: string, scope: string, model?: string): Promise<number> {
    checkScope(index, scope, model);
    return Number((await this.run<{ n: string }>("refusedCount", [index, scope, model ?? null]))[0].n);
  }

  async dimensions(index: string, model: string): Promise<number | null> {
    checkScope(index, "-", model);
    return (await this.model(index, model))?.dims ?? null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cache.clear();
    await this.pool.end();
  }

  /** The scope's codes for the model, up to date as of a read made now; null when the scope has none. */
  private async current(
    index: string,
    scope: string,
    model: string,
    found: Model,
  ): Promise<{ set: CodeSet; num: string } | null> {
    const key = CodeCache.key(index, scope, model);
    for (;;) {
      const [row] = await this.run<ScopeRow>("scope", [index, scope]);
      if (!row) return null;
      const at = version(row);
      const set = this.cache.get(key);
      const plan = refreshPlan(set, at);
      if (plan === "current" && set) return { set, num: row.num };
      if (plan === "since" && set) {
        const rows = await this.run<{ id: string; code: Buffer }>("since", [
          row.num,
          found.num,
          set.at.version,
        ]);
        // A delete applied meanwhile could be undone by these rows: start over (the set is reloaded).
        if (set.at.deletes !== at.deletes || this.cache.get(key) !== set) continue;
        for (const { id, code } of rows) set.upsert({ id, ref: 0, code });
        if (at.version > set.at.version) set.at = at;
        return { set, num: row.num };
      }
      const pending = this.loading.get(key);
      if (pending) {
        await pending;
        continue;
      }
      const load = this.load(key, row.num, model, found, at);
      this.loading.set(key, load);
      try {
        await load;
      } finally {
        this.loading.delete(key);
      }
    }
  }

  private async load(key: string, num: string, model: string, found: Model, at: ScopeVersion): Promise<void> {
    const rows = await this.run<{ id: string; code: Buffer }>("load", [num, found.num]);
    const set = new CodeSet(model, found.dims, at);
    for (const { id, code } of rows) set.upsert({ id, ref: 0, code });
    this.cache.set(key, set);
  }

  private async model(index: string, model: string): Promise<Model | undefined> {
    const key = `${index}\u0000${model}`;
    let found = this.models.get(key);
    if (!found) {
      [found] = await this.run<Model>("model", [index, model]);
      if (found) this.models.set(key, found);
    }
    return found;
  }

  private async addModel(index: string, model: string, dims: number): Promise<Model> {
    const [added] = await this.run<Model>("addModel", [index, model, dims]);
    if (added.dims !== dims) {
      throw badRequest(`vector: ${dims} dimensions, but the model's vectors have ${added.dims}`);
    }
    this.models.set(`${index}\u0000${model}`, added);
    return added;
  }

  private run<T extends object>(statement: Statement, values: unknown[]): Promise<T[]> {
    return namedQuery<T>(this.pool, `agentos_vector_${statement}`, this.sql[statement], values);
  }
}
