import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { TextHit, TextIndex } from "../../../src/engine/search/types.ts";
import { AppError } from "../../../src/shared/errors.ts";

const HOUR = 60 * 60 * 1000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

/** Strings built from what query languages treat as syntax, mixed with arbitrary text. */
const SYNTAX = [
  '"',
  "'",
  "AND",
  "OR",
  "NOT",
  "NEAR",
  "NEAR(",
  "(",
  ")",
  ":",
  "*",
  "^",
  "-",
  "+",
  "{",
  "}",
].concat(["&", "|", "!", "<->", "<2>", ":*", "\\", "\u0000", "\uD800", "text:", "ns:", "rank", "'a':A", ";"]);
const hostileQuery = fc
  .array(
    fc.oneof(
      fc.constantFrom(...SYNTAX),
      fc.string({ unit: "binary", maxLength: 12 }),
      fc.constantFrom("tea", "Tee"),
    ),
    {
      maxLength: 12,
    },
  )
  .map((parts) => parts.join(fc.sample(fc.constantFrom("", " ", "\t"), 1)[0]));

const HOSTILE = [
  '"',
  '"unclosed',
  "'; DROP TABLE search_docs; --",
  "AND OR NOT",
  "NEAR(tea kettle, 2)",
  "text : tea",
  "{text ns} : tea",
  "tea*",
  "^tea",
  "-tea +kettle",
  "tea & !kettle | (green <-> tea)",
  "tea:* & kettle:A",
  "\u0000tea\u0000",
  "lone \uD800 surrogate",
  "((((((((((",
  "\\\\\\",
  "🫖🫖🫖",
  "x".repeat(4000),
];

/** The TextIndex contract: both backends must pass exactly these tests. */
export function textIndexContract(
  name: string,
  makeIndex: () => TextIndex | Promise<TextIndex>,
  runs: number,
) {
  describe(`TextIndex contract (${name})`, () => {
    let index: TextIndex;
    let scope: string;
    const INDEX = "memory";
    const put = (id: string, text: string, createdAt = ago(HOUR), data: unknown = { id }) =>
      index.put(INDEX, scope, id, { text, data, createdAt });
    const search = async (query: string, limit = 10, target = scope): Promise<TextHit[]> =>
      await index.search(INDEX, target, query, { limit });
    const ids = (hits: TextHit[]) => hits.map((hit) => hit.id);

    beforeAll(async () => {
      index = await makeIndex();
    });
    afterAll(async () => {
      await index?.close();
    });
    beforeEach(() => {
      scope = `agent-${randomUUID()}`;
    });

    it("finds a document by any of its words and hands back id, data, score and createdAt", async () => {
      const createdAt = ago(2 * HOUR);
      await put("a", "The quarterly budget review moved to Thursday", createdAt, { nested: [1, { x: "y" }] });
      await put("b", "Lunch with the design team", createdAt);
      const hits = await search("budget friday");
      expect(hits).toEqual([
        { id: "a", data: { nested: [1, { x: "y" }] }, score: expect.any(Number), createdAt },
      ]);
      expect(hits[0].score).toBeGreaterThan(0);
      expect(hits[0].score).toBeLessThan(1);
      expect(ids(await search("LUNCH"))).toEqual(["b"]);
      expect(await search("dinner")).toEqual([]);
    });

    it("ignores terms found in most of a large scope's newest entries, and finds nothing by them alone", async () => {
      // 300 entries all saying "hello"; every tenth also names a fruit, and five name a rare word.
      for (let i = 0; i < 300; i++) {
        const extra = i % 10 === 0 ? " banana" : i < 5 ? " zeppelin" : "";
        await put(`e${i}`, `hello there, note ${i}${extra}`, ago(HOUR + i * 1000));
      }
      expect(await search("hello")).toEqual([]);
      expect(ids(await search("hello zeppelin")).sort()).toEqual(["e1", "e2", "e3", "e4"]);
      // Not common (a tenth of the entries): still ranked, and "hello" adds nothing to it.
      const bananas = await search("banana hello", 50);
      expect(bananas).toHaveLength(30);
      expect(ids(bananas)).toEqual(ids(await search("banana", 50)));
    });

    it("counts a term as common once it has become common, after earlier searches counted it rare", async () => {
      for (let i = 0; i < 300; i++) {
        await put(`r${i}`, `weather report ${i}${i % 3 === 0 ? " zebra" : ""}`, ago(HOUR + i * 1000));
      }
      expect(await search("zebra", 200)).toHaveLength(100);
      for (let i = 0; i < 200; i++) await put(`z${i}`, `zebra sighting ${i}`);
      expect(await search("zebra", 200)).toEqual([]);
    });

    it("still ranks by a common term in a small scope", async () => {
      for (let i = 0; i < 20; i++) await put(`s${i}`, `hello again ${i}`);
      expect(await search("hello", 50)).toHaveLength(20);
    });

    it("stems words, so a plural finds the singular", async () => {
      await put("a", "The server crashed overnight");
      expect(ids(await search("servers"))).toEqual(["a"]);
    });

    it("ranks a document matching more of the terms higher", async () => {
      await put("one", "kubernetes notes from the meeting");
      await put("three", "kubernetes cluster upgrade notes");
      await put("two", "kubernetes cluster meeting notes");
      expect(ids(await search("kubernetes cluster upgrade"))).toEqual(["three", "two", "one"]);
    });

    it("ranks a document matching a rarer term higher", async () => {
      for (let i = 0; i < 8; i++) await put(`common-${i}`, `apple orchard visit number ${i}`);
      await put("rare", "zebracorn sighting report");
      await put("plain", "apple sighting report");
      const hits = await search("apple zebracorn", 10);
      expect(hits[0].id).toBe("rare");
      expect(hits).toHaveLength(10);
      expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a));
    });

    it("puts the newer of two equally relevant documents first", async () => {
      await put("old", "deploy the billing service", ago(30 * 24 * HOUR));
      await put("new", "deploy the billing service", ago(HOUR));
      await put("older", "deploy the billing service", ago(90 * 24 * HOUR));
      const hits = await search("billing deploy");
      expect(ids(hits)).toEqual(["new", "old", "older"]);
      expect(hits[0].score).toBeGreaterThan(hits[1].score);
      // With a half-life of ages, recency no longer separates them.
      const flat = await index.search(INDEX, scope, "billing", { limit: 3, recencyHalfLifeMs: 1e15 });
      expect(flat[0].score - flat[2].score).toBeLessThan(1e-5);
    });

    it("keeps scopes and indexes apart, even with the same ids", async () => {
      const other = `${scope}x`;
      await put("same", "shared secret alpha");
      await index.put(INDEX, other, "same", {
        text: "shared secret beta",
        data: "other",
        createdAt: ago(HOUR),
      });
      await index.put("notes", scope, "same", {
        text: "shared secret gamma",
        data: "notes",
        createdAt: ago(HOUR),
      });
      expect(ids(await search("alpha beta gamma"))).toEqual(["same"]);
      expect((await search("secret"))[0].data).toEqual({ id: "same" });
      expect((await search("secret", 10, other))[0].data).toBe("other");
      expect(await index.count(INDEX, scope)).toBe(1);
      expect(await index.count(INDEX, other)).toBe(1);
      expect(await index.count("notes", scope)).toBe(1);
    });

    it("replaces a document put again under its id", async () => {
      await put("a", "first version about cats", ago(2 * HOUR), 1);
      await put("a", "second version about dogs", ago(HOUR), 2);
      expect(await search("cats")).toEqual([]);
      expect(await search("dogs")).toMatchObject([{ id: "a", data: 2 }]);
      expect(await index.count(INDEX, scope)).toBe(1);
    });

    it("puts several documents at once, each as put would, replacing one put before under its id", async () => {
      await put("a", "first version about cats", ago(3 * HOUR), 1);
      const createdAt = ago(HOUR);
      await index.putMany(INDEX, scope, [
        { id: "a", doc: { text: "second version about dogs", data: 2, createdAt } },
        { id: "b", doc: { text: "a note about parrots", data: 3, createdAt } },
      ]);
      expect(await search("cats")).toEqual([]);
      expect(await search("dogs")).toMatchObject([{ id: "a", data: 2, createdAt }]);
      expect(await search("parrots")).toMatchObject([{ id: "b", data: 3, createdAt }]);
      expect(await index.count(INDEX, scope)).toBe(2);
      const listed = await index.list(INDEX, scope, { limit: 10 });
      // Same time: the one written later comes first, as with two puts.
      expect(listed.items.map((item) => item.id)).toEqual(["b", "a"]);
    });

    it("puts a batch whose id repeats as puts in order would: the last one stays", async () => {
      const createdAt = ago(HOUR);
      await index.putMany(INDEX, scope, [
        { id: "a", doc: { text: "first about herons", data: 1, createdAt } },
        { id: "b", doc: { text: "a note about egrets", data: 2, createdAt } },
        { id: "a", doc: { text: "second about storks", data: 3, createdAt } },
      ]);
      expect(await search("herons")).toEqual([]);
      expect(await search("storks")).toMatchObject([{ id: "a", data: 3 }]);
      expect(await index.count(INDEX, scope)).toBe(2);
    });

    it("writes none of a batch that holds an invalid document", async () => {
      const createdAt = ago(HOUR);
      await expect(
        Promise.resolve().then(() =>
          index.putMany(INDEX, scope, [
            { id: "a", doc: { text: "a valid note about ibises", data: 1, createdAt } },
            { id: "b", doc: { text: "no date", data: 2, createdAt: "not a date" } },
          ]),
        ),
      ).rejects.toThrow(/createdAt/);
      expect(await search("ibises")).toEqual([]);
      expect(await index.count(INDEX, scope)).toBe(0);
    });

    it("deletes a document, and a whole scope without touching others", async () => {
      const other = `${scope}-other`;
      for (const id of ["a", "b", "c"]) await put(id, `invoice ${id} overdue`);
      await index.put(INDEX, other, "a", { text: "invoice overdue", data: null, createdAt: ago(HOUR) });
      expect(await index.delete(INDEX, scope, "b")).toBe(true);
      expect(await index.delete(INDEX, scope, "b")).toBe(false);
      expect(ids(await search("invoice")).sort()).toEqual(["a", "c"]);
      expect(await index.deleteScope(INDEX, scope)).toBe(2);
      expect(await index.deleteScope(INDEX, scope)).toBe(0);
      expect(await search("invoice")).toEqual([]);
      expect(await index.count(INDEX, scope)).toBe(0);
      expect(ids(await search("invoice", 10, other))).toEqual(["a"]);
      await put("again", "invoice paid");
      expect(ids(await search("invoice"))).toEqual(["again"]);
    });

    // Both backends keep a count per scope (no scan): it must stay the number of documents listed.
    it("keeps each scope's count exact under batches at once, replacements, deletes and scope deletes", async () => {
      const other = `${scope}-other`;
      const listed = async (target: string) => {
        let n = 0;
        let cursor: string | undefined;
        do {
          const page = await index.list(INDEX, target, { limit: 200, ...(cursor ? { cursor } : {}) });
          n += page.items.length;
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        return n;
      };
      const batch = (target: string, from: number, length: number) =>
        index.putMany(
          INDEX,
          target,
          Array.from({ length }, (_, i) => ({
            id: `d${(from + i) % 60}`,
            doc: { text: `entry ${from + i}`, data: null, createdAt: ago(HOUR - from - i) },
          })),
        );
      await Promise.all(
        Array.from({ length: 24 }, (_, i) => {
          if (i % 6 === 5) return index.delete(INDEX, scope, `d${i}`);
          if (i === 13) return index.deleteScope(INDEX, other);
          return batch(i % 2 ? other : scope, i * 7, 20);
        }),
      );
      for (const target of [scope, other])
        expect(await index.count(INDEX, target)).toBe(await listed(target));
      await expect(
        index.putMany(INDEX, scope, [
          { id: "new", doc: { text: "fine", data: null, createdAt: ago(HOUR) } },
          { id: "bad", doc: { text: "nul \u0000", data: null, createdAt: ago(HOUR) } },
        ]),
      ).rejects.toThrow();
      expect(await index.count(INDEX, scope)).toBe(await listed(scope));
      const before = await index.count(INDEX, other);
      expect(await index.deleteScope(INDEX, other)).toBe(before);
      expect(await index.count(INDEX, other)).toBe(0);
      await batch(other, 0, 3);
      expect(await index.count(INDEX, other)).toBe(3);
    });

    it("lists a scope's documents newest first, page by page, each once, and only that scope's", async () => {
      const other = `${scope}-other`;
      await index.put(INDEX, other, "x", { text: "elsewhere", data: null, createdAt: ago(HOUR) });
      const times = Array.from({ length: 7 }, (_, i) => ago((10 - i) * HOUR));
      for (let i = 0; i < 7; i++) await put(`d${i}`, `note ${i}`, times[i], { n: i });
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await index.list(INDEX, scope, { limit: 3, ...(cursor ? { cursor } : {}) });
        seen.push(...page.items.map((item) => item.id));
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      expect(seen).toEqual(["d6", "d5", "d4", "d3", "d2", "d1", "d0"]);
      const first = await index.list(INDEX, scope, { limit: 1 });
      expect(first.items).toEqual([{ id: "d6", data: { n: 6 }, createdAt: times[6] }]);
      expect(await index.list(INDEX, `${scope}-none`, { limit: 5 })).toEqual({ items: [], nextCursor: null });
      await expect(
        Promise.resolve().then(() => index.list(INDEX, scope, { limit: 2, cursor: "nope!" })),
      ).rejects.toThrow("cursor");
    });

    it("never lists another scope's or index's documents through a forged cursor; one it cannot read is a validation error", async () => {
      await put("mine", "my note", ago(HOUR), "mine");
      // Written after this scope's first document: on SQLite, scopes numbered after it.
      await index.put(INDEX, `${scope}-later`, "theirs", {
        text: "their note",
        data: "theirs",
        createdAt: ago(0),
      });
      await index.put("other-index", scope, "elsewhere", { text: "x", data: "elsewhere", createdAt: ago(0) });
      const forged = [
        "9223372036854775807",
        "9999999999999999999",
        "0",
        Buffer.from(JSON.stringify([Number.MAX_VALUE, "\uffff"])).toString("base64url"),
        Buffer.from(JSON.stringify([Date.now(), "nul\u0000"])).toString("base64url"),
        Buffer.from(JSON.stringify([Date.now(), "\ud800"])).toString("base64url"),
        Buffer.from('[1e999, "x"]').toString("base64url"),
      ];
      for (const cursor of forged) {
        const answer = await Promise.resolve()
          .then(() => index.list(INDEX, scope, { limit: 50, cursor }))
          .catch((error: unknown) => error as Error);
        if (answer instanceof Error) {
          expect(answer, `${cursor}: ${answer.message}`).toBeInstanceOf(AppError);
          expect((answer as AppError).code).toBe("validation");
        } else {
          expect(
            answer.items.map((item) => item.data),
            cursor,
          ).not.toContain("theirs");
          expect(
            answer.items.map((item) => item.data),
            cursor,
          ).not.toContain("elsewhere");
        }
      }
    });
    it("gets documents by id, only the scope's own and those there, and nothing for no ids", async () => {
      await index.put(INDEX, `${scope}-other`, "x", {
        text: "elsewhere",
        data: "theirs",
        createdAt: ago(HOUR),
      });
      const [older, newer] = [ago(2 * HOUR), ago(HOUR)];
      await put("a", "first note", older, { n: 1 });
      await put("b", "second note", newer, { n: 2 });
      const got = await index.get(INDEX, scope, ["b", "x", "missing", "a", "a"]);
      expect([...got].sort((p, q) => (p.id < q.id ? -1 : 1))).toEqual([
        { id: "a", data: { n: 1 }, createdAt: older },
        { id: "b", data: { n: 2 }, createdAt: newer },
      ]);
      expect(await index.get(INDEX, scope, [])).toEqual([]);
      expect(await index.get(INDEX, `${scope}-none`, ["a"])).toEqual([]);
    });

    it("returns at most `limit` hits, best first", async () => {
      for (let i = 0; i < 30; i++)
        await put(`d${i}`, `standup notes ${"standup ".repeat(i % 3)}day ${i}`, ago(i * HOUR));
      const hits = await search("standup", 5);
      expect(hits).toHaveLength(5);
      expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a));
      expect(await search("standup", 200)).toHaveLength(30);
    });

    it("indexes and finds text in any script", async () => {
      await put("fr", "Un café très naïve à Paris");
      await put("de", "Die Straße ist GROSS");
      await put("jp", "会議は 日本語 で行います");
      await put("emoji", "launch day 🚀 party");
      expect(ids(await search("café"))).toEqual(["fr"]);
      expect(ids(await search("CAFÉ NAÏVE"))).toEqual(["fr"]);
      expect(ids(await search("straße"))).toEqual(["de"]);
      expect(ids(await search("日本語"))).toEqual(["jp"]);
      expect(ids(await search("🚀 launch"))).toEqual(["emoji"]);
    });

    it("finds nothing for a query of stop words or punctuation only", async () => {
      await put("a", "the and of to in");
      expect(await search("the and of")).toEqual([]);
      expect(await search("?!.,;")).toEqual([]);
    });

    const labelled = HOSTILE.map((query) => [
      query.length > 40 ? `${query.slice(0, 10)}… (${query.length})` : query,
      query,
    ]);
    it.each(labelled)("answers the hostile query %j without an error", async (_label, query) => {
      await put("tea", "green tea in a kettle");
      const hits = await search(query);
      expect(Array.isArray(hits)).toBe(true);
      for (const hit of hits) expect(hit.id).toBe("tea");
    });

    it("never fails on arbitrary query strings (property)", async () => {
      await put("tea", "green tea in a kettle");
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(hostileQuery, fc.string({ unit: "binary", maxLength: 64 })),
          async (query) => {
            const hits = await search(query);
            return Array.isArray(hits) && hits.every((hit) => hit.id === "tea");
          },
        ),
        { numRuns: runs },
      );
    });

    it("refuses text with NUL and an unreadable createdAt as validation errors", async () => {
      for (const doc of [
        { text: "a\u0000b", data: null, createdAt: ago(0) },
        { text: "fine", data: null, createdAt: "not a date" },
      ]) {
        const error = await Promise.resolve()
          .then(() => index.put(INDEX, scope, "bad", doc))
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).code).toBe("validation");
      }
      expect(await index.count(INDEX, scope)).toBe(0);
    });

    it("closes idempotently", async () => {
      const extra = await makeIndex();
      await extra.close();
      await extra.close();
    });
  });
}
