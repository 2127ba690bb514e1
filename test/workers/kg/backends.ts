import { loadConfig } from "../../../src/config/env.ts";
import type { Engine } from "../../../src/engine/engine.ts";
import { findTestPostgres } from "../../engine/state/contract.ts";
import { type Cluster, startCluster } from "../../helpers/cluster.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

export interface Backend {
  name: string;
  start: () => Promise<{ engine: Engine; close: () => Promise<void> }>;
}

/**
 * The service's engine on each backend: SQLite (a test server) and PostgreSQL (a one-node cluster),
 * PostgreSQL skipped with the reason printed when none is reachable.
 */
export async function kgBackends(suite: string, env: Record<string, string> = {}): Promise<Backend[]> {
  const postgres = await findTestPostgres();
  if (postgres.url === null) console.warn(`${suite}: skipping PostgreSQL: ${postgres.reason}`);
  const sqlite: Backend = {
    name: "SQLite",
    start: async () => {
      // The settings `env` gives (AGENTOS_*), as the test server's configuration.
      const { kgHistoryRetentionDays } = loadConfig(env);
      const server: TestServer = await startTestServer({ kgHistoryRetentionDays });
      return { engine: server.service.engine, close: () => server.close() };
    },
  };
  if (postgres.url === null) return [sqlite];
  const url = postgres.url;
  return [
    sqlite,
    {
      name: "PostgreSQL",
      start: async () => {
        const cluster: Cluster = await startCluster(url, 1, { AGENTOS_RATE_LIMITS: "off", ...env });
        return { engine: (cluster.nodes[0] as { engine: Engine }).engine, close: () => cluster.close() };
      },
    },
  ];
}
