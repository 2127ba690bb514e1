import { randomBytes, randomUUID } from "node:crypto";
import { Client } from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { StateStore } from "../../../src/engine/state/types.ts";
import { versionConflictMessage } from "../../../src/engine/state/values.ts";
import { setClock } from "../../../src/shared/clock.ts";
import { AppError } from "../../../src/shared/errors.ts";

/** UTF-8 byte order = code point order: the key order both backends promise. */
const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** A store may answer synchronously; its failures are still rejections, never synchronous throws. */
async function rejection(result: unknown): Promise<AppError> {
  expect(result).toBeInstanceOf(Promise);
  const error = await (result as Promise<unknown>).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

async function expectConflict(promise: unknown, message: string): Promise<void> {
  const error = await rejection(promise);
  expect(error.code).toBe("conflict");
  expect(error.message).toBe(message);
}

const JSON_VALUES: Array<[string, unknown]> = [
  ["nested object", { a: { b: [1, { c: null }], d: "x" }, e: [] }],
  ["array", [1, "two", [3], { four: 4 }, null, true]],
  ["unicode", "héllo wörld ✓ 日本語 😀 👨‍👩‍👧 \uFFFD"],
  ["NUL inside a string", "before\u0000after"],
  ["lone surrogate", "lone \uD800 surrogate"],
  ["escapes", 'quote " backslash \\ newline \n tab \t'],
  ["max safe integer", Number.MAX_SAFE_INTEGER],
  ["negative max safe integer", -Number.MAX_SAFE_INTEGER],
  ["largest double", 1.7976931348623157e308],
  ["smallest double", 5e-324],
  ["fraction", 0.1],
  ["zero", 0],
  ["true", true],
  ["false", false],
  ["null", null],
  ["empty string", ""],
  ["empty object", {}],
  ["empty array", []],
];

/** The StateStore contract: both backends must pass exactly these tests. */
export function stateStoreContract(name: string, makeStore: () => StateStore | Promise<StateStore>): void {
  describe(`StateStore contract (${name})`, () => {
    let store: StateStore;
    let scope: string;
    const seed = async (keys: string[]) => {
      for (const key of keys) await store.set(scope, key, { key });
    };
    const keysOf = (page: { items: Array<{ key: string }> }) => page.items.map((item) => item.key);

    beforeAll(async () => {
      store = await makeStore();
    });
    afterAll(async () => {
      await store?.close();
    });
    // Every test gets its own scope, so tests share one store without seeing each other's keys.
    beforeEach(() => {
      scope = `scope-${randomUUID()}`;
    });

    describe("get and set", () => {
      it("returns null for a missing key", async () => {
        expect(await store.get(scope, "missing")).toBeNull();
      });

      it.each(JSON_VALUES)("round-trips %s exactly", async (_label, value) => {
        const { record } = await store.set(scope, "k", value);
        expect(record.value).toEqual(value);
        expect((await store.get(scope, "k"))?.value).toEqual(value);
        expect((await store.list(scope, { limit: 10 })).items[0].value).toEqual(value);
      });

      it("starts versions at 1, adds 1 per write and returns the old record", async () => {
        const first = await store.set(scope, "k", "one");
        expect(first.old).toBeNull();
        expect(first.record).toMatchObject({ key: "k", value: "one", version: 1 });
        const second = await store.set(scope, "k", "two");
        expect(second.old).toMatchObject({ key: "k", value: "one", version: 1 });
        expect(second.record.version).toBe(2);
        await store.set(scope, "k", "three");
        expect(await store.get(scope, "k")).toMatchObject({ value: "three", version: 3 });
      });

      it("stamps updatedAt from the clock", async () => {
        setClock({ now: () => Date.UTC(2030, 0, 2, 3, 4, 5, 6) });
        try {
          const { record } = await store.set(scope, "k", 1);
          expect(record.updatedAt).toBe("2030-01-02T03:04:05.006Z");
          expect((await store.get(scope, "k"))?.updatedAt).toBe("2030-01-02T03:04:05.006Z");
        } finally {
          setClock(null);
        }
      });

      it("refuses undefined as a value", async () => {
        expect((await rejection(store.set(scope, "k", undefined))).code).toBe("validation");
        expect(await store.get(scope, "k")).toBeNull();
      });
    });

    describe("compare-and-swap", () => {
      it("writes when expectedVersion matches and conflicts when it is stale", async () => {
        await store.set(scope, "k", "v1");
        expect((await store.set(scope, "k", "v2", 1)).record.version).toBe(2);
        await expectConflict(store.set(scope, "k", "stale", 1), versionConflictMessage(scope, "k", 1, 2));
        expect(await store.get(scope, "k")).toMatchObject({ value: "v2", version: 2 });
      });

      it("expectedVersion 0 creates only when the key is absent", async () => {
        expect((await store.set(scope, "k", "first", 0)).record.version).toBe(1);
        await expectConflict(store.set(scope, "k", "second", 0), versionConflictMessage(scope, "k", 0, 1));
        await expectConflict(
          store.set(scope, "absent", "x", 3),
          versionConflictMessage(scope, "absent", 3, 0),
        );
        expect(await store.get(scope, "absent")).toBeNull();
      });

      it.each([
        ["an existing key", 1],
        ["a missing key", 0],
      ])(
        "lets exactly one of many concurrent writers with the same version win on %s",
        async (_label, base) => {
          if (base === 1) await store.set(scope, "k", "base");
          const writers = Array.from({ length: 12 }, (_, i) => store.set(scope, "k", `writer-${i}`, base));
          const results = await Promise.allSettled(writers);
          const winners = results.flatMap((result, i) => (result.status === "fulfilled" ? [i] : []));
          expect(winners).toHaveLength(1);
          for (const result of results) {
            if (result.status === "rejected") expect((result.reason as AppError).code).toBe("conflict");
          }
          expect(await store.get(scope, "k")).toMatchObject({
            value: `writer-${winners[0]}`,
            version: base + 1,
          });
        },
      );
    });

    describe("delete", () => {
      it("returns the old record, or null when there was none", async () => {
        await store.set(scope, "k", { a: 1 });
        expect(await store.delete(scope, "k")).toMatchObject({ key: "k", value: { a: 1 }, version: 1 });
        expect(await store.get(scope, "k")).toBeNull();
        expect(await store.delete(scope, "k")).toBeNull();
      });

      it("deletes conditionally on expectedVersion", async () => {
        await store.set(scope, "k", "a");
        await store.set(scope, "k", "b");
        await expectConflict(store.delete(scope, "k", 1), versionConflictMessage(scope, "k", 1, 2));
        await expectConflict(store.delete(scope, "k", 0), versionConflictMessage(scope, "k", 0, 2));
        expect((await store.get(scope, "k"))?.value).toBe("b");
        expect(await store.delete(scope, "k", 2)).toMatchObject({ value: "b", version: 2 });
        expect(await store.delete(scope, "k", 0)).toBeNull();
        await expectConflict(store.delete(scope, "k", 2), versionConflictMessage(scope, "k", 2, 0));
      });

      it("restarts versions at 1 when a deleted key is written again", async () => {
        await store.set(scope, "k", 1);
        await store.set(scope, "k", 2);
        await store.delete(scope, "k");
        expect((await store.set(scope, "k", 3)).record.version).toBe(1);
      });
    });

    describe("list", () => {
      it("returns an empty page for an empty scope", async () => {
        expect(await store.list(scope, { limit: 10 })).toEqual({ items: [], lastKey: null });
      });

      it("orders keys by code point", async () => {
        const keys = ["z", "é", "😀", "\uFFFD", "a/b", "B", "a", "a0", "A", "~"];
        await seed(keys);
        const listed = keysOf(await store.list(scope, { limit: 100 }));
        expect(listed).toEqual(["A", "B", "a", "a/b", "a0", "z", "~", "é", "\uFFFD", "😀"]);
        expect(listed).toEqual([...keys].sort(byCodePoint));
      });

      it("returns whole records", async () => {
        await store.set(scope, "k", { x: 1 });
        await store.set(scope, "k", { x: 2 });
        const [item] = (await store.list(scope, { limit: 1 })).items;
        expect(item).toEqual({ key: "k", value: { x: 2 }, version: 2, updatedAt: expect.any(String) });
      });

      it.each([
        ["100%", ["100%", "100%x"]],
        ["a_", ["a_", "a_b", "a_c"]],
        ["a*", ["a*", "a*b"]],
        ["a", ["a", "a*", "a*b", "a_", "a_b", "a_c", "ab", "axb"]],
        ["😀", ["😀", "😀1", "😀😀"]],
        ["\uFFFF", ["\uFFFFx"]],
        ["\u{10FFFF}", ["\u{10FFFF}", "\u{10FFFF}z"]],
        ["nothing", []],
      ])("filters by the literal prefix %j", async (prefix, expected) => {
        const keys = [
          "100%",
          "100%x",
          "100x",
          "1000",
          "a",
          "a_",
          "a_b",
          "a_c",
          "axb",
          "a*",
          "a*b",
          "ab",
          "b",
        ];
        await seed([...keys, "😀", "😀1", "😀😀", "😁", "\uFFFFx", "\u{10000}", "\u{10FFFF}", "\u{10FFFF}z"]);
        expect(keysOf(await store.list(scope, { prefix, limit: 100 }))).toEqual(expected);
      });

      it("pages through lastKey without duplicates or gaps", async () => {
        const keys = Array.from(
          { length: 23 },
          (_, i) => `item-${String(i).padStart(2, "0")}-${i % 3 ? "é" : "😀"}`,
        );
        await seed([...keys, "other", "itex"]);
        for (const limit of [1, 5, 7, 23, 50]) {
          const seen: string[] = [];
          let after: string | undefined;
          let pages = 0;
          do {
            const page = await store.list(scope, { prefix: "item-", after, limit });
            seen.push(...keysOf(page));
            after = page.lastKey ?? undefined;
            if (page.lastKey !== null) expect(page.items).toHaveLength(limit);
            pages++;
          } while (after !== undefined);
          expect(seen).toEqual([...keys].sort(byCodePoint));
          expect(pages).toBe(Math.max(1, Math.ceil(keys.length / limit)));
        }
      });

      it("resumes strictly after `after`, within the prefix", async () => {
        await seed(["a1", "a2", "a3", "b1", "\uE000a", "\uE000b"]);
        expect(keysOf(await store.list(scope, { after: "a2", limit: 10 }))).toEqual([
          "a3",
          "b1",
          "\uE000a",
          "\uE000b",
        ]);
        expect(keysOf(await store.list(scope, { prefix: "a", after: "0", limit: 10 }))).toEqual([
          "a1",
          "a2",
          "a3",
        ]);
        expect(keysOf(await store.list(scope, { prefix: "a", after: "a9", limit: 10 }))).toEqual([]);
        // U+1F600 sorts after U+E000 by code point, though its UTF-16 form sorts before.
        expect(keysOf(await store.list(scope, { prefix: "\uE000", after: "😀", limit: 10 }))).toEqual([]);
      });
    });

    describe("update", () => {
      it("starts a missing key from an empty object", async () => {
        const result = await store.update(scope, "k", [{ type: "set", path: "a", value: 1 }]);
        expect(result).toMatchObject({ old: null, record: { value: { a: 1 }, version: 1 }, errors: [] });
      });

      it("applies set, merge, increment, decrement, append and remove", async () => {
        await store.set(scope, "k", {
          count: 1,
          tags: ["a"],
          profile: { name: "x" },
          text: "ab",
          gone: true,
        });
        const result = await store.update(scope, "k", [
          { type: "set", path: ["profile", "age"], value: 3 },
          { type: "merge", path: "profile", value: { city: "Paris" } },
          { type: "increment", path: "count", by: 5 },
          { type: "decrement", path: "count", by: 2 },
          { type: "append", path: "tags", value: "b" },
          { type: "append", path: "text", value: "cd" },
          { type: "remove", path: "gone" },
        ]);
        const expected = {
          count: 4,
          tags: ["a", "b"],
          profile: { name: "x", age: 3, city: "Paris" },
          text: "abcd",
        };
        expect(result.errors).toEqual([]);
        expect(result.old?.value).toMatchObject({ count: 1, gone: true });
        expect(result.record).toMatchObject({ value: expected, version: 2 });
        expect((await store.get(scope, "k"))?.value).toEqual(expected);
      });

      it("reports a failing op and still applies the others", async () => {
        await store.set(scope, "k", { name: "x" });
        const result = await store.update(scope, "k", [
          { type: "set", path: "a", value: 1 },
          { type: "increment", path: "name", by: 1 },
          { type: "set", path: "b", value: 2 },
        ]);
        expect(result.errors).toEqual([
          { op_index: 1, code: "increment.not_number", message: expect.any(String) },
        ]);
        expect((await store.get(scope, "k"))?.value).toEqual({ name: "x", a: 1, b: 2 });
      });

      it("is conditional on expectedVersion", async () => {
        const inc = [{ type: "increment" as const, path: "n", by: 1 }];
        expect((await store.update(scope, "k", inc, 0)).record).toMatchObject({
          value: { n: 1 },
          version: 1,
        });
        await expectConflict(store.update(scope, "k", inc, 0), versionConflictMessage(scope, "k", 0, 1));
        expect((await store.update(scope, "k", inc, 1)).record.version).toBe(2);
        expect((await store.get(scope, "k"))?.value).toEqual({ n: 2 });
      });

      it("loses no increment under 50 concurrent updates of a key that did not exist", async () => {
        const inc = [{ type: "increment" as const, path: "n", by: 1 }];
        await Promise.all(Array.from({ length: 50 }, () => store.update(scope, "k", inc)));
        expect(await store.get(scope, "k")).toMatchObject({ value: { n: 50 }, version: 50 });
      });
    });

    describe("batch", () => {
      const inc = [{ type: "increment" as const, path: "n", by: 1 }];

      it("applies set, update and delete in order, in one go", async () => {
        await store.set(scope, "gone", 1);
        const results = await store.batch([
          { type: "set", scope, key: "a", value: { x: 1 } },
          { type: "update", scope, key: "a", ops: [{ type: "set", path: "y", value: 2 }] },
          { type: "update", scope, key: "n", ops: inc },
          { type: "delete", scope, key: "gone" },
          { type: "delete", scope, key: "never" },
        ]);
        expect(results.map((result) => result.record?.version ?? null)).toEqual([1, 2, 1, null, null]);
        expect(results[3]?.old?.value).toBe(1);
        expect(results[4]?.old).toBeNull();
        expect((await store.get(scope, "a"))?.value).toEqual({ x: 1, y: 2 });
        expect(await store.get(scope, "gone")).toBeNull();
      });

      it("applies nothing when one op's expectedVersion does not match", async () => {
        await store.set(scope, "a", "before");
        const failed = store.batch([
          { type: "set", scope, key: "a", value: "after" },
          { type: "update", scope, key: "n", ops: inc },
          { type: "set", scope, key: "claim", value: "x", expectedVersion: 0 },
          { type: "set", scope, key: "a", value: "late", expectedVersion: 7 },
        ]);
        expect((await rejection(failed)).code).toBe("conflict");
        expect(await store.get(scope, "a")).toMatchObject({ value: "before", version: 1 });
        expect(await store.get(scope, "n")).toBeNull();
        expect(await store.get(scope, "claim")).toBeNull();
      });

      it("applies nothing when a value cannot be stored", async () => {
        const failed = store.batch([
          { type: "set", scope, key: "a", value: 1 },
          { type: "set", scope, key: "b", value: undefined },
        ]);
        await rejection(failed);
        expect(await store.get(scope, "a")).toBeNull();
      });

      it("loses no write when 40 batches touch the same keys concurrently, in opposite orders", async () => {
        await Promise.all(
          Array.from({ length: 40 }, (_, i) => {
            const ops = [
              { type: "update" as const, scope, key: "p", ops: inc },
              { type: "update" as const, scope, key: "q", ops: inc },
            ];
            return store.batch(i % 2 === 0 ? ops : ops.reverse());
          }),
        );
        expect((await store.get(scope, "p"))?.value).toEqual({ n: 40 });
        expect((await store.get(scope, "q"))?.value).toEqual({ n: 40 });
      });
    });

    describe("scopes", () => {
      it("keeps scopes apart, including scopes that share a prefix", async () => {
        const other = `${scope}x`;
        await store.set(scope, "k", "mine");
        await store.set(other, "k", "theirs");
        await store.set(other, "k2", "theirs");
        expect((await store.get(scope, "k"))?.value).toBe("mine");
        expect(keysOf(await store.list(scope, { limit: 10 }))).toEqual(["k"]);
        await store.delete(other, "k");
        expect(await store.get(scope, "k")).toMatchObject({ value: "mine", version: 1 });
        expect(keysOf(await store.list(other, { limit: 10 }))).toEqual(["k2"]);
      });

      it("lists every scope holding a key, sorted, and forgets a scope once emptied", async () => {
        const [a, b] = [`${scope}-a`, `${scope}-b`];
        await store.set(b, "k", 1);
        await store.set(a, "k", 1);
        await store.set(a, "k2", 1);
        const mine = async () => (await store.listScopes()).filter((name) => name.startsWith(scope));
        expect(await mine()).toEqual([a, b]);
        await store.delete(b, "k");
        expect(await mine()).toEqual([a]);
      });
    });

    it("closes idempotently", async () => {
      const extra = await makeStore();
      await extra.close();
      await extra.close();
    });
  });
}

/** Where a test PostgreSQL is, or why there is none (those tests then skip instead of failing). */
export async function findTestPostgres(): Promise<{ url: string } | { url: null; reason: string }> {
  const configured = process.env.AGENTOS_TEST_DATABASE_URL;
  const candidates = configured
    ? [configured]
    : ["postgres://root@127.0.0.1:5432/test", "postgres://postgres@127.0.0.1:5432/test"];
  const failures: string[] = [];
  for (const url of candidates) {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      const { rows } = await client.query(
        "SELECT has_database_privilege(current_database(), 'CREATE') AS ok",
      );
      if (rows[0].ok) return { url };
      failures.push(`${redact(url)}: no CREATE privilege on the database`);
    } catch (error) {
      failures.push(`${redact(url)}: ${(error as Error).message}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return {
    url: null,
    reason: `no usable PostgreSQL (${failures.join("; ")}); set AGENTOS_TEST_DATABASE_URL`,
  };
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");
}

export function uniqueSchema(): string {
  return `test_${randomBytes(6).toString("hex")}`;
}

/** One statement on a connection of its own: the rows it answered. */
export async function sqlOnce<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  await sqlOnce(url, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
