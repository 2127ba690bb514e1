import { join } from "node:path";
import type { DatabaseTimeouts } from "../state/pg-pool.ts";
import type { CodeUpgradeNotice } from "./code-upgrade.ts";
import { PostgresVectorIndex } from "./postgres.ts";
import { SqliteVectorIndex } from "./sqlite.ts";
import type { VectorIndex } from "./types.ts";

export interface OpenVectorIndexOptions {
  /** PostgreSQL URL (AGENTOS_DATABASE_URL): cluster mode. Unset or empty: the embedded SQLite file. */
  databaseUrl?: string;
  /** Cluster mode: pool size and time limits of the connections. */
  max?: number;
  timeouts?: DatabaseTimeouts;
  /** Data directory (AGENTOS_DATA_DIR) holding the SQLite file in embedded mode. */
  dataDir: string;
  /** PostgreSQL schema for the tables (tests); without it the connection's search_path decides. */
  schema?: string;
  /** Memory for cached sign codes (see codes.ts); least recently queried scopes are dropped beyond it. */
  cacheBytes?: number;
  /** Told before the codes of an older build are recomputed, once (code-upgrade.ts). */
  onCodeUpgrade?: CodeUpgradeNotice;
}

/**
 * Picks the vector index for the storage mode, beside the state store and the text index: in embedded
 * mode the same `<dataDir>/agentos.db` on the shared connection, in cluster mode the same PostgreSQL.
 */
export async function openVectorIndex(options: OpenVectorIndexOptions): Promise<VectorIndex> {
  if (options.databaseUrl) {
    return PostgresVectorIndex.open({
      connectionString: options.databaseUrl,
      schema: options.schema,
      max: options.max,
      timeouts: options.timeouts,
      cacheBytes: options.cacheBytes,
      onCodeUpgrade: options.onCodeUpgrade,
    });
  }
  return new SqliteVectorIndex(join(options.dataDir, "agentos.db"), {
    cacheBytes: options.cacheBytes,
    onCodeUpgrade: options.onCodeUpgrade,
  });
}
