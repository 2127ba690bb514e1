import { afterAll, describe, expect, it } from "vitest";
import { registerStateFunctions } from "../../../src/engine/state/functions.ts";
import { openStateStore } from "../../../src/engine/state/open.ts";
import { PostgresStateStore } from "../../../src/engine/state/postgres.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { createTestEngine } from "../../helpers/engine.ts";
import { freezableProxy } from "../../helpers/pg-proxy.ts";
import { dropSchema, findTestPostgres, sqlOnce, stateStoreContract, uniqueSchema } from "./contract.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping PostgreSQL state store tests: ${found.reason}`);
const url = found.url ?? "";
// One schema per run, so parallel runs and leftovers from earlier runs never meet.
const schema = uniqueSchema();

describe.skipIf(found.url === null)("PostgresStateStore", () => {
  afterAll(() => dropSchema(url, schema));

  stateStoreContract("postgres", () => PostgresStateStore.open({ connectionString: url, schema, max: 10 }));

  const sql = <T>(text: string, values: unknown[] = []) => sqlOnce<T>(url, text, values);

  it("stores the value as the exact JSON text, with C-collated keys", async () => {
    const store = await PostgresStateStore.open({ connectionString: url, schema });
    try {
      await store.set("raw", "k", { b: 1, a: [true, null], s: "😀\u0000" });
      const rows = await sql<{ value: string; version: string }>(
        `SELECT value, version FROM "${schema}".state WHERE scope = 'raw' AND key = 'k'`,
      );
      expect(rows).toEqual([{ value: '{"b":1,"a":[true,null],"s":"😀\\u0000"}', version: "1" }]);
      const collations = await sql<{ column_name: string; collation_name: string }>(
        `SELECT column_name, collation_name FROM information_schema.columns
         WHERE table_schema = $1 AND table_name = 'state' AND column_name IN ('scope', 'key') ORDER BY column_name`,
        [schema],
      );
      expect(collations.map((row) => row.collation_name)).toEqual(["C", "C"]);
    } finally {
      await store.close();
    }
  });

  it("lets several nodes open the same fresh schema at once", async () => {
    const fresh = uniqueSchema();
    try {
      const stores = await Promise.all(
        Array.from({ length: 4 }, () =>
          PostgresStateStore.open({ connectionString: url, schema: fresh, max: 2 }),
        ),
      );
      await stores[0].set("s", "k", "shared");
      expect((await stores[3].get("s", "k"))?.value).toBe("shared");
      await Promise.all(stores.map((store) => store.close()));
    } finally {
      await dropSchema(url, fresh);
    }
  });

  it("loses no increment when the writers are separate nodes", async () => {
    const nodes = await Promise.all(
      Array.from({ length: 3 }, () => PostgresStateStore.open({ connectionString: url, schema, max: 4 })),
    );
    try {
      const inc = [{ type: "increment" as const, path: "n", by: 1 }];
      await Promise.all(Array.from({ length: 30 }, (_, i) => nodes[i % 3].update("nodes", "counter", inc)));
      expect(await nodes[0].get("nodes", "counter")).toMatchObject({ value: { n: 30 }, version: 30 });
    } finally {
      await Promise.all(nodes.map((node) => node.close()));
    }
  });

  it("openStateStore picks PostgreSQL when a database URL is set", async () => {
    const fresh = uniqueSchema();
    // The URL carries the schema through search_path, as a deployment without a schema option would.
    const scoped = `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${fresh}`)}`;
    try {
      await sql(`CREATE SCHEMA "${fresh}"`);
      const store = await openStateStore({ databaseUrl: scoped, dataDir: "/nonexistent" });
      expect(store.kind).toBe("postgres");
      await store.set("s", "k", 1);
      await store.close();
      expect(await sql(`SELECT key FROM "${fresh}".state`)).toEqual([{ key: "k" }]);
    } finally {
      await dropSchema(url, fresh);
    }
  });

  it("refuses a key too long for the primary-key index as a validation error naming it", async () => {
    const store = await PostgresStateStore.open({ connectionString: url, schema });
    const engine = createTestEngine();
    registerStateFunctions(engine, store);
    // Distinct three-byte characters, so PostgreSQL cannot compress the index entry below its limit.
    const cjk = (length: number, from: number) =>
      Array.from({ length }, (_, i) => String.fromCodePoint(0x4e00 + ((from + i * 7919) % 20000))).join("");
    try {
      const scope = cjk(256, 0);
      const call = (key: string) =>
        engine.trigger({ function_id: "state::set", payload: { scope, key, value: 1 } });
      const error = await call(cjk(1024, 1)).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("validation");
      expect((error as AppError).message).toMatch(/key must be at most 1536 bytes/);
      // The longest key allowed fits, under the longest scope.
      await call(cjk(512, 2));
      expect((await store.list(scope, { limit: 1 })).items).toHaveLength(1);
    } finally {
      engine.shutdown();
      await store.close();
    }
  });

  it("fails with 503 (unavailable), not an unexpected error, once the database cannot be reached", async () => {
    const proxy = await freezableProxy(new URL(url));
    const store = await PostgresStateStore.open({ connectionString: proxy.url, schema, max: 2 });
    try {
      await store.set("down", "k", 1);
      await proxy.close();
      // Each failure is taken as it comes: one awaited later would be an unhandled rejection meanwhile.
      const attempts = [
        store.get("down", "k"),
        store.set("down", "k", 2),
        store.list("down", { limit: 1 }),
      ].map((attempt) => attempt.catch((caught: unknown) => caught));
      for (const attempt of attempts) {
        const error = await attempt;
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).code).toBe("unavailable");
      }
    } finally {
      await store.close();
    }
  });

  it("fails to open with a clear error when the server is unreachable", async () => {
    const open = PostgresStateStore.open({ connectionString: "postgres://nobody@127.0.0.1:1/none" });
    await expect(open).rejects.toThrow(/ECONNREFUSED|connect/);
  });
});
