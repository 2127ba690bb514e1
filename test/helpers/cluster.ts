import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "pg";
import { type AgentOS, createAgentOS } from "../../src/app.ts";
import { type Config, loadConfig } from "../../src/config/env.ts";
import { dropSchema, uniqueSchema } from "../engine/state/contract.ts";
import { UNUSED_PROVIDER_KEYS } from "./server.ts";

export const CLUSTER_ADMIN_KEY = "cluster-admin-key-0123456789abcdef";
const VAULT_KEY = "ab".repeat(32);

/** A node's configuration: its own data dir, the shared admin key, silent logs. */
export function nodeConfig(env: Record<string, string>, dirs: string[]): Config {
  const dataDir = mkdtempSync(join(tmpdir(), "agentos-cluster-"));
  dirs.push(dataDir);
  return {
    ...loadConfig({
      ...UNUSED_PROVIDER_KEYS,
      AGENTOS_DATA_DIR: dataDir,
      AGENTOS_API_KEY: CLUSTER_ADMIN_KEY,
      AGENTOS_LOG_LEVEL: "silent",
      ...env,
    }),
    port: 0,
    host: "127.0.0.1",
  };
}

export interface Cluster {
  nodes: AgentOS[];
  /** Another node joining the same database. */
  addNode(): Promise<AgentOS>;
  close(): Promise<void>;
}

/** `count` nodes sharing one fresh PostgreSQL schema (carried in the URL's search_path, as a deployment would). */
export async function startCluster(
  url: string,
  count: number,
  env: Record<string, string> = {},
): Promise<Cluster> {
  const schema = uniqueSchema();
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query(`CREATE SCHEMA "${schema}"`);
  await client.end();
  const scopedUrl = `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const nodeEnv = { AGENTOS_DATABASE_URL: scopedUrl, AGENTOS_VAULT_KEY: VAULT_KEY, ...env };
  const dirs: string[] = [];
  const nodes: AgentOS[] = [];
  const addNode = async () => {
    const node = await createAgentOS(nodeConfig(nodeEnv, dirs));
    nodes.push(node);
    return node;
  };
  for (let i = 0; i < count; i++) await addNode();
  return {
    nodes,
    addNode,
    async close() {
      for (const node of nodes) await node.close().catch(() => undefined);
      await dropSchema(url, schema);
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}
