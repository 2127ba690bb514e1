import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { MaybePromise } from "../../shared/maybe-promise.ts";
import { openSqliteConnection, type SqliteConnection } from "../state/sqlite-connection.ts";
import { Int8Scorer } from "./code-memory.ts";
import { type CodeUpgradeNotice, SQLITE_META, upgradeSqliteCodes } from "./code-upgrade.ts";
import { CodeCache, type CodeRow, CodeSet, DEFAULT_CACHE_BYTES, followWrite, refreshPlan } from "./codes.ts";
import { best, passSizes, shortlist, unitVector } from "./scan.ts";
import type { VectorEntry, VectorHit, VectorIndex, VectorInput, VectorQueryOptions } from "./types.ts";
import { checkName, checkScope, encodeEntries } from "./values.ts";

/** Answers synchronously on success; a failure is a rejected promise, as from any async backend. */
function settle<T>(work: () => T): MaybePromise<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * `vector_scopes` counts each scope's writes (`version`, also every written row's `seq`) and deletes,
 * so a process sees at a point read whether its cached codes are current. Codes and int8 vectors are
 * two tables under one rowid: loading a scope reads only the codes (1/9 of the bytes at any dimension).
 * Scope rows are never removed: their counters must only grow, or a stale cache could look current.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS vector_scopes (
    num INTEGER PRIMARY KEY AUTOINCREMENT,
    idx TEXT NOT NULL,
    scope TEXT NOT NULL,
    version INTEGER NOT NULL,
    deletes INTEGER NOT NULL,
    UNIQUE (idx, scope)
  );
  CREATE TABLE IF NOT EXISTS vector_models (
    num INTEGER PRIMARY KEY AUTOINCREMENT,
    idx TEXT NOT NULL,
    model TEXT NOT NULL,
    dims INTEGER NOT NULL,
    UNIQUE (idx, model)
  );
  CREATE TABLE IF NOT EXISTS vector_codes (
    rowid INTEGER PRIMARY KEY,
    scope_num INTEGER NOT NULL,
    model_num INTEGER NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    code BLOB NOT NULL,
    UNIQUE (scope_num, id, model_num)
  );
  CREATE INDEX IF NOT EXISTS vector_codes_seq ON vector_codes (scope_num, model_num, seq);
  CREATE TABLE IF NOT EXISTS vector_data (rowid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
  CREATE TABLE IF NOT EXISTS vector_refusals (
    idx TEXT NOT NULL,
    scope TEXT NOT NULL,
    id TEXT NOT NULL,
    model TEXT NOT NULL,
    PRIMARY KEY (idx, scope, id, model)
  ) WITHOUT ROWID;
`;

interface Model {
  num: number;
  dims: number;
}
interface Scope {
  num: number;
  version: number;
  deletes: number;
}

/**
 * The embedded vector index, in the state store's SQLite file on its shared connection (writes are
 * group-committed, see SqliteConnection). Each scope's codes are cached in memory (see codes.ts).
 */
export class SqliteVectorIndex implements VectorIndex {
  readonly kind = "sqlite";
  private readonly connection: SqliteConnection;
  private readonly db: DatabaseSync;
  private readonly statements: Record<string, StatementSync>;
  private readonly cache: CodeCache;
  /** Rescores shortlists (WebAssembly; its scratch memory is reused by every query). */
  private readonly scorer = new Int8Scorer();
  /** Models never change dimension nor number once stored: kept for the life of the process. */
  private readonly models = new Map<string, Model>();

  constructor(path: string, options: { cacheBytes?: number; onCodeUpgrade?: CodeUpgradeNotice } = {}) {
    this.connection = openSqliteConnection(path);
    this.db = this.connection.db;
    this.db.exec(SCHEMA);
    this.db.exec(SQLITE_META);
    upgradeSqliteCodes(this.db, options.onCodeUpgrade);
    this.cache = new CodeCache(options.cacheBytes ?? DEFAULT_CACHE_BYTES);
    const prepare = (sql: string) => this.db.prepare(sql);
    this.statements = {
      scope: prepare("SELECT num, version, deletes FROM vector_scopes WHERE idx = ? AND scope = ?"),
      wrote: prepare(
        `INSERT INTO vector_scopes (idx, scope, version, deletes) VALUES (?, ?, 1, 0)
         ON CONFLICT (idx, scope) DO UPDATE SET version = version + 1 RETURNING num, version, deletes`,
      ),
      deleted: prepare(
        "UPDATE vector_scopes SET version = version + 1, deletes = deletes + 1 WHERE num = ? RETURNING num, version, deletes",
      ),
      model: prepare("SELECT num, dims FROM vector_models WHERE idx = ? AND model = ?"),
      addModel: prepare("INSERT INTO vector_models (idx, model, dims) VALUES (?, ?, ?) RETURNING num, dims"),
      putCode: prepare(
        `INSERT INTO vector_codes (scope_num, model_num, id, seq, code) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (scope_num, id, model_num) DO UPDATE SET seq = excluded.seq, code = excluded.code
         RETURNING rowid`,
      ),
      putData: prepare("INSERT OR REPLACE INTO vector_data (rowid, vec) VALUES (?, ?)"),
      // A shortlist's int8 vectors in one statement (200 rows: ~1 ms; one `get` each took 2.5–4 ms).
      vecs: prepare("SELECT rowid, vec FROM vector_data WHERE rowid IN (SELECT value FROM json_each(?))"),
      deleteId: prepare("DELETE FROM vector_codes WHERE scope_num = ? AND id = ? RETURNING rowid"),
      deleteData: prepare("DELETE FROM vector_data WHERE rowid = ?"),
      deleteScopeData: prepare(
        "DELETE FROM vector_data WHERE rowid IN (SELECT rowid FROM vector_codes WHERE scope_num = ?)",
      ),
      deleteScopeCodes: prepare("DELETE FROM vector_codes WHERE scope_num = ?"),
      deleteOtherData: prepare(
        "DELETE FROM vector_data WHERE rowid IN (SELECT rowid FROM vector_codes WHERE scope_num = ? AND model_num <> ?)",
      ),
      deleteOtherCodes: prepare("DELETE FROM vector_codes WHERE scope_num = ? AND model_num <> ?"),
      load: prepare("SELECT rowid AS ref, id, code FROM vector_codes WHERE scope_num = ? AND model_num = ?"),
      since: prepare(
        "SELECT rowid AS ref, id, code FROM vector_codes WHERE scope_num = ? AND model_num = ? AND seq > ?",
      ),
      countAll: prepare("SELECT count(*) AS n FROM vector_codes WHERE scope_num = ?"),
      // Refusals are keyed by name, not by scope number: refusing makes no scope row (nor moves its counters).
      refuse: prepare(
        "INSERT INTO vector_refusals (idx, scope, id, model) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
      ),
      refusedOf: prepare(
        "SELECT id FROM vector_refusals WHERE idx = ? AND scope = ? AND model = ? AND id IN (SELECT value FROM json_each(?))",
      ),
      refusedCount: prepare(
        "SELECT count(*) AS n FROM vector_refusals WHERE idx = ? AND scope = ? AND (? IS NULL OR model = ?)",
      ),
      unrefuseId: prepare("DELETE FROM vector_refusals WHERE idx = ? AND scope = ? AND id = ?"),
      unrefuseScope: prepare("DELETE FROM vector_refusals WHERE idx = ? AND scope = ?"),
      unrefuseOthers: prepare("DELETE FROM vector_refusals WHERE idx = ? AND scope = ? AND model <> ?"),
    };
    // Rows as arrays, not objects: no property names to set on each.
    this.statements.vecs.setReturnArrays(true);
  }

  put(index: string, scope: string, id: string, vector: VectorInput, model: string): MaybePromise<void> {
    return this.putMany(index, scope, model, [{ id, vector }]);
  }

  putMany(index: string, scope: string, model: string, entries: VectorEntry[]): MaybePromise<void> {
    let encoded: ReturnType<typeof encodeEntries>;
    try {
      checkScope(index, scope, model);
      encoded = encodeEntries(entries, this.model(index, model)?.dims ?? null);
    } catch (error) {
      return Promise.reject(error);
    }
    if (encoded.length === 0) return;
    const dims = (encoded[0].vec.length - 4) as number;
    return this.written(
      this.connection.write(() => {
        const { num: modelNum } = this.model(index, model) ?? this.addModel(index, model, dims);
        const at = this.statements.wrote.get(index, scope) as unknown as Scope;
        const rows: CodeRow[] = encoded.map(({ id, code, vec }) => {
          const { rowid } = this.statements.putCode.get(at.num, modelNum, id, at.version, code) as {
            rowid: number;
          };
          this.statements.putData.run(rowid, vec);
          return { id, ref: rowid, code };
        });
        followWrite(this.cache.ofScope(index, scope), at, false, (set) => {
          if (set.model === model) for (const row of rows) set.upsert(row);
        });
      }),
    );
  }

  delete(index: string, scope: string, id: string): MaybePromise<boolean> {
    try {
      checkScope(index, scope);
      checkName("id", id);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.written(
      this.connection.write(() => {
        this.statements.unrefuseId.run(index, scope, id);
        const found = this.statements.scope.get(index, scope) as Scope | undefined;
        if (!found) return false;
        const gone = this.statements.deleteId.all(found.num, id) as Array<{ rowid: number }>;
        if (gone.length === 0) return false;
        for (const { rowid } of gone) this.statements.deleteData.run(rowid);
        const at = this.statements.deleted.get(found.num) as unknown as Scope;
        followWrite(this.cache.ofScope(index, scope), at, true, (set) => set.remove(id));
        return true;
      }),
    );
  }

  deleteScope(index: string, scope: string): MaybePromise<number> {
    try {
      checkScope(index, scope);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.written(
      this.connection.write(() => {
        this.cache.dropScope(index, scope);
        this.statements.unrefuseScope.run(index, scope);
        const found = this.statements.scope.get(index, scope) as Scope | undefined;
        if (!found) return 0;
        this.statements.deleteScopeData.run(found.num);
        const n = Number(this.statements.deleteScopeCodes.run(found.num).changes);
        if (n > 0) this.statements.deleted.get(found.num);
        return n;
      }),
    );
  }

  deleteOtherModels(index: string, scope: string, model: string): MaybePromise<number> {
    try {
      checkScope(index, scope, model);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.written(
      this.connection.write(() => {
        this.statements.unrefuseOthers.run(index, scope, model);
        const found = this.statements.scope.get(index, scope) as Scope | undefined;
        if (!found) return 0;
        const keep = this.model(index, model)?.num ?? -1;
        this.statements.deleteOtherData.run(found.num, keep);
        const n = Number(this.statements.deleteOtherCodes.run(found.num, keep).changes);
        if (n > 0) {
          this.statements.deleted.get(found.num);
          this.cache.dropScope(index, scope);
        }
        return n;
      }),
    );
  }

  query(
    index: string,
    scope: string,
    vector: VectorInput,
    options: VectorQueryOptions,
  ): MaybePromise<VectorHit[]> {
    return settle(() => {
      const set = this.current(index, scope, options.model);
      const unit = unitVector(vector, this.model(index, options.model)?.dims);
      if (!set || set.count === 0) return [];
      const slots = shortlist(set, unit, passSizes(options.limit, options.rescore));
      return best(this.rescored(set, slots, unit), options.limit);
    });
  }

  /**
   * The shortlisted slots scored from their int8 vectors (in rowid order, as SQLite reads them; `best`
   * orders them). A row deleted by another process since the scope's counters were read is left out.
   */
  private rescored(set: CodeSet, slots: Int32Array, unit: Float32Array): VectorHit[] {
    const slotOf = new Map<number, number>();
    for (const slot of slots) slotOf.set(set.refs[slot], slot);
    const rows = this.statements.vecs.all(JSON.stringify([...slotOf.keys()])) as unknown as Array<
      [number, Uint8Array]
    >;
    const scores = this.scorer.cosines(
      unit,
      rows.map((row) => row[1]),
    );
    return rows.map(([ref], i) => ({ id: set.ids[slotOf.get(ref) as number], score: scores[i] }));
  }

  count(index: string, scope: string, model?: string): MaybePromise<number> {
    return settle(() => {
      if (model !== undefined) return this.current(index, scope, model)?.count ?? 0;
      checkScope(index, scope);
      const found = this.statements.scope.get(index, scope) as Scope | undefined;
      return found ? Number((this.statements.countAll.get(found.num) as { n: number }).n) : 0;
    });
  }

  missing(index: string, scope: string, model: string, ids: readonly string[]): MaybePromise<string[]> {
    return settle(() => {
      const set = this.current(index, scope, model);
      const without = set ? ids.filter((id) => !set.has(id)) : [...ids];
      if (without.length === 0) return without;
      const refused = this.statements.refusedOf.all(index, scope, model, JSON.stringify(without)) as Array<{
        id: string;
      }>;
      if (refused.length === 0) return without;
      const left = new Set(refused.map(({ id }) => id));
      return without.filter((id) => !left.has(id));
    });
  }

  refuse(index: string, scope: string, model: string, ids: readonly string[]): MaybePromise<void> {
    try {
      checkScope(index, scope, model);
      for (const id of ids) checkName("id", id);
    } catch (error) {
      return Promise.reject(error);
    }
    if (ids.length === 0) return;
    return this.connection.write(() => {
      for (const id of ids) this.statements.refuse.run(index, scope, id, model);
    });
  }

  refused(index: string, scope: string, model?: string): MaybePromise<number> {
    return settle(() => {
      checkScope(index, scope, model);
      const only = model ?? null;
      return Number((this.statements.refusedCount.get(index, scope, only, only) as { n: number }).n);
    });
  }

  dimensions(index: string, model: string): MaybePromise<number | null> {
    return settle(() => {
      checkScope(index, "-", model);
      return this.model(index, model)?.dims ?? null;
    });
  }

  async close(): Promise<void> {
    this.cache.clear();
    await this.connection.close();
  }

  /** The scope's codes for the model, brought up to the database's counters; null when it has none. */
  private current(index: string, scope: string, model: string): CodeSet | null {
    checkScope(index, scope, model);
    const found = this.model(index, model);
    const at = this.statements.scope.get(index, scope) as Scope | undefined;
    if (!found || !at) return null;
    const key = CodeCache.key(index, scope, model);
    let set = this.cache.get(key);
    const plan = refreshPlan(set, at);
    if (plan === "current" && set) return set;
    if (plan === "since" && set) {
      for (const row of this.statements.since.iterate(at.num, found.num, set.at.version))
        set.upsert(row as unknown as CodeRow);
    } else {
      set = new CodeSet(model, found.dims, at);
      for (const row of this.statements.load.iterate(at.num, found.num))
        set.upsert(row as unknown as CodeRow);
      this.cache.set(key, set);
    }
    set.at = { version: at.version, deletes: at.deletes };
    return set;
  }

  private model(index: string, model: string): Model | undefined {
    const key = `${index}\u0000${model}`;
    let found = this.models.get(key);
    if (!found) {
      found = this.statements.model.get(index, model) as Model | undefined;
      if (found) this.models.set(key, { num: found.num, dims: found.dims });
    }
    return found;
  }

  private addModel(index: string, model: string, dims: number): Model {
    const added = this.statements.addModel.get(index, model, dims) as unknown as Model;
    // Kept once committed (written() forgets everything cached if the commit fails).
    this.models.set(`${index}\u0000${model}`, { num: added.num, dims: added.dims });
    return added;
  }

  /** A write's answer; should its commit fail, cached state may hold what was undone: all of it is dropped. */
  private written<T>(result: Promise<T>): Promise<T> {
    return result.catch((error) => {
      this.cache.clear();
      this.models.clear();
      throw error;
    });
  }
}
