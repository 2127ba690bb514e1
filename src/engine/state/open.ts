import { join } from "node:path";
import type { DatabaseTimeouts } from "./pg-pool.ts";
import { PostgresStateStore } from "./postgres.ts";
import { SqliteStateStore } from "./sqlite.ts";
import type { StateStore } from "./types.ts";

export interface OpenStateOptions {
  /** PostgreSQL URL (AGENTOS_DATABASE_URL): cluster mode. Unset or empty: the embedded SQLite file. */
  databaseUrl?: string;
  /** Cluster mode: pool size and time limits of the connections. */
  max?: number;
  timeouts?: DatabaseTimeouts;
  /** Data directory (AGENTOS_DATA_DIR) holding the SQLite file in embedded mode. */
  dataDir: string;
}

/** Picks the state backend for the storage mode (DESIGN.md §1, "Storage and scale"). */
export async function openStateStore(options: OpenStateOptions): Promise<StateStore> {
  if (options.databaseUrl) {
    const { max, timeouts } = options;
    return PostgresStateStore.open({ connectionString: options.databaseUrl, max, timeouts });
  }
  return new SqliteStateStore(join(options.dataDir, "agentos.db"));
}
