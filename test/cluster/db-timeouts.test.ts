import { Client } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { type AgentOS, createAgentOS } from "../../src/app.ts";
import { dropSchema, findTestPostgres, uniqueSchema } from "../engine/state/contract.ts";
import { CLUSTER_ADMIN_KEY as KEY, nodeConfig } from "../helpers/cluster.ts";
import { removeDir } from "../helpers/process.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping the database timeout test: ${found.reason}`);

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
});

describe.skipIf(found.url === null)("a node whose database does not answer in time", () => {
  it("answers a request stuck on a lock another session holds with a 503 naming the timeout", async () => {
    const url = found.url ?? "";
    const schema = uniqueSchema();
    const admin = new Client({ connectionString: url });
    await admin.connect();
    cleanups.push(() => admin.end());
    await admin.query(`CREATE SCHEMA "${schema}"`);
    cleanups.push(() => dropSchema(url, schema));
    const scopedUrl = `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const dirs: string[] = [];
    const node: AgentOS = await createAgentOS(
      nodeConfig(
        {
          AGENTOS_DATABASE_URL: scopedUrl,
          AGENTOS_VAULT_KEY: "cd".repeat(32),
          AGENTOS_RATE_LIMITS: "off",
          AGENTOS_DATABASE_STATEMENT_TIMEOUT_MS: "500",
        },
        dirs,
      ),
    );
    cleanups.push(async () => {
      await node.close();
      for (const dir of dirs) removeDir(dir);
    });
    const list = () =>
      node.http.inject({ method: "GET", url: "/api/workflows", headers: { authorization: `Bearer ${KEY}` } });
    expect((await list()).statusCode).toBe(200);

    // Another session (a stuck migration, a long transaction) holds the state table.
    await admin.query("BEGIN");
    await admin.query(`LOCK TABLE "${schema}".state IN ACCESS EXCLUSIVE MODE`);
    const response = await list();
    await admin.query("ROLLBACK");
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({
      error: expect.stringMatching(/statement timeout \(AGENTOS_DATABASE_STATEMENT_TIMEOUT_MS\)/),
    });
    expect((await list()).statusCode).toBe(200);
  }, 60_000);
});
