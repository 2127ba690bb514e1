import { Client } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { registerSearchFunctions } from "../../../src/engine/search/functions.ts";
import { openTextIndex } from "../../../src/engine/search/open.ts";
import { PostgresTextIndex } from "../../../src/engine/search/postgres.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { createTestEngine } from "../../helpers/engine.ts";
import { dropSchema, findTestPostgres, uniqueSchema } from "../state/contract.ts";
import { textIndexContract } from "./contract.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping PostgreSQL text index tests: ${found.reason}`);
const url = found.url ?? "";
const schema = uniqueSchema();

describe.skipIf(found.url === null)("PostgresTextIndex", () => {
  afterAll(() => dropSchema(url, schema));

  textIndexContract("postgres", () => PostgresTextIndex.open({ connectionString: url, schema, max: 4 }), 60);

  it("deletes a scope larger than one statement's chunk whole, a chunk at a time", async () => {
    const index = await PostgresTextIndex.open({ connectionString: url, schema, max: 2, deleteChunk: 3 });
    try {
      const createdAt = new Date().toISOString();
      const docs = Array.from({ length: 10 }, (_, i) => ({
        id: `d${i}`,
        doc: { text: `doc ${i}`, data: null, createdAt },
      }));
      await index.putMany("m", "chunked", docs);
      await index.put("m", "kept", "k", { text: "another scope", data: null, createdAt });
      expect(await index.deleteScope("m", "chunked")).toBe(10);
      expect(await index.count("m", "chunked")).toBe(0);
      expect(await index.count("m", "kept")).toBe(1);
      expect(await index.deleteScope("m", "chunked")).toBe(0);
    } finally {
      await index.close();
    }
  });

  it("openTextIndex picks PostgreSQL when a database URL is set", async () => {
    const index = await openTextIndex({ databaseUrl: url, dataDir: "/nonexistent", schema });
    try {
      expect(index.kind).toBe("postgres");
      await index.put("m", "open", "a", {
        text: "cluster mode",
        data: null,
        createdAt: new Date().toISOString(),
      });
      expect(await index.count("m", "open")).toBe(1);
    } finally {
      await index.close();
    }
  });

  it("refuses an id too long for the primary-key index as a validation error naming it", async () => {
    const index = await PostgresTextIndex.open({ connectionString: url, schema, max: 2 });
    const engine = createTestEngine();
    registerSearchFunctions(engine, index);
    // Distinct three-byte characters, so PostgreSQL cannot compress the index entry below its limit.
    const cjk = (length: number, from: number) =>
      Array.from({ length }, (_, i) => String.fromCodePoint(0x4e00 + ((from + i * 7919) % 20000))).join("");
    const [name, scope] = [cjk(256, 0), cjk(256, 1)];
    const put = (id: string) =>
      engine.trigger({ function_id: "search::put", payload: { index: name, scope, id, text: "words" } });
    try {
      const error = await put(cjk(1024, 2)).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("validation");
      expect((error as AppError).message).toMatch(/id must be at most 1024 bytes/);
      // The longest id allowed fits, under the longest index and scope names.
      await put(`${cjk(341, 3)}a`);
      expect(await index.count(name, scope)).toBe(1);
    } finally {
      engine.shutdown();
      await index.close();
    }
  });

  it("lets several nodes open the same fresh schema at once", async () => {
    const fresh = uniqueSchema();
    try {
      const nodes = await Promise.all(
        Array.from({ length: 3 }, () =>
          PostgresTextIndex.open({ connectionString: url, schema: fresh, max: 2 }),
        ),
      );
      await nodes[0].put("m", "s", "a", {
        text: "written on node zero",
        data: 0,
        createdAt: new Date().toISOString(),
      });
      expect((await nodes[2].search("m", "s", "node", { limit: 5 })).map((hit) => hit.data)).toEqual([0]);
      await Promise.all(nodes.map((node) => node.close()));
    } finally {
      await dropSchema(url, fresh);
    }
  });
});

describe.skipIf(found.url === null)("PostgresTextIndex counts", () => {
  it("keeps each scope's count exact under concurrent puts, replacements and deletes", async () => {
    const fresh = uniqueSchema();
    const nodes = await Promise.all(
      Array.from({ length: 3 }, () =>
        PostgresTextIndex.open({ connectionString: url, schema: fresh, max: 4 }),
      ),
    );
    try {
      const createdAt = new Date().toISOString();
      const writes = Array.from({ length: 90 }, (_, i) => {
        const node = nodes[i % 3];
        const id = `d${i % 40}`;
        return i % 5 === 4
          ? node.delete("m", "s", id)
          : node.put("m", "s", id, { text: `entry ${i}`, data: i, createdAt });
      });
      await Promise.all(writes);
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT count(*)::int AS n FROM "${fresh}".search_docs`);
        expect(await nodes[0].count("m", "s")).toBe(rows[0].n);
      } finally {
        await client.end();
      }
      const before = await nodes[2].count("m", "s");
      expect(await nodes[1].deleteScope("m", "s")).toBe(before);
      expect(await nodes[0].count("m", "s")).toBe(0);
    } finally {
      await Promise.all(nodes.map((node) => node.close()));
      await dropSchema(url, fresh);
    }
  });
});
