import { join } from "node:path";
import type { DatabaseTimeouts } from "../state/pg-pool.ts";
import { PostgresTextIndex } from "./postgres.ts";
import { SqliteTextIndex } from "./sqlite.ts";
import type { TextIndex } from "./types.ts";

export interface OpenTextIndexOptions {
  /** PostgreSQL URL (AGENTOS_DATABASE_URL): cluster mode. Unset or empty: the embedded SQLite file. */
  databaseUrl?: string;
  /** Cluster mode: pool size and time limits of the connections. */
  max?: number;
  timeouts?: DatabaseTimeouts;
  /** Data directory (AGENTOS_DATA_DIR) holding the SQLite file in embedded mode. */
  dataDir: string;
  /** PostgreSQL schema for the table (tests); without it the connection's search_path decides. */
  schema?: string;
  /** The serving process: SQLite's index merges its segments while idle (a CLI command's does not). */
  background?: boolean;
}

/**
 * Picks the text index for the storage mode, beside the state store: in embedded mode the same
 * `<dataDir>/agentos.db` on the state store's connection, in cluster mode the same PostgreSQL database.
 */
export async function openTextIndex(options: OpenTextIndexOptions): Promise<TextIndex> {
  if (options.databaseUrl) {
    const { schema, max, timeouts } = options;
    return PostgresTextIndex.open({ connectionString: options.databaseUrl, schema, max, timeouts });
  }
  return new SqliteTextIndex(join(options.dataDir, "agentos.db"), {}, options.background ? {} : undefined);
}
