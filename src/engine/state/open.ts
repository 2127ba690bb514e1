import { join } from "node:path";
import { PostgresStateStore } from "./postgres.ts";
import { SqliteStateStore } from "./sqlite.ts";
import type { StateStore } from "./types.ts";

export interface OpenStateOptions {
  /** PostgreSQL URL (AGENTOS_DATABASE_URL): cluster mode. Unset or empty: the embedded SQLite file. */
  databaseUrl?: string;
  /** Data directory (AGENTOS_DATA_DIR) holding the SQLite file in embedded mode. */
  dataDir: string;
}

/** Picks the state backend for the storage mode (DESIGN.md §1, "Storage and scale"). */
export async function openStateStore(options: OpenStateOptions): Promise<StateStore> {
  if (options.databaseUrl) return PostgresStateStore.open({ connectionString: options.databaseUrl });
  return new SqliteStateStore(join(options.dataDir, "agentos.db"));
}
