import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { registerSearchFunctions } from "../../../src/engine/search/functions.ts";
import { PostgresTextIndex } from "../../../src/engine/search/postgres.ts";
import { SqliteTextIndex } from "../../../src/engine/search/sqlite.ts";
import type { TextIndex } from "../../../src/engine/search/types.ts";
import { setClock } from "../../../src/shared/clock.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { registerMemory } from "../../../src/workers/memory/index.ts";
import { dropSchema, findTestPostgres, uniqueSchema } from "../../engine/state/contract.ts";
import { createStateEngine } from "../../helpers/engine.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping memory tests on PostgreSQL: ${found.reason}`);
const schema = uniqueSchema();

const backends: Array<[string, (() => Promise<TextIndex>) | null]> = [
  ["sqlite", async () => new SqliteTextIndex(":memory:")],
  [
    "postgres",
    found.url
      ? () => PostgresTextIndex.open({ connectionString: found.url as string, schema, max: 4 })
      : null,
  ],
];

afterAll(async () => {
  if (found.url) await dropSchema(found.url, schema);
});

interface Entry {
  id: string;
  agentId: string;
  sessionId: string | null;
  role: string;
  content: string;
  createdAt: string;
  score?: number;
}

describe.each(backends)("memory worker (%s)", (_name, openIndex) => {
  let engine: Engine;
  let index: TextIndex;
  let closeState: () => Promise<void>;
  let agent = 0;
  let agentId: string;
  const call = <T>(function_id: string, payload: unknown) =>
    engine.trigger({ function_id, payload }) as Promise<T>;
  const store = (payload: Record<string, unknown>) => call<Entry>("memory::store", { agentId, ...payload });
  const recall = async (query: string, extra: Record<string, unknown> = {}) =>
    (await call<{ results: Entry[] }>("memory::recall", { agentId, query, ...extra })).results;

  beforeAll(async () => {
    if (!openIndex) return;
    const state = createStateEngine();
    engine = state.engine;
    closeState = state.close;
    index = await openIndex();
    registerSearchFunctions(engine, index);
    registerMemory(engine.worker("memory", "Agent memory"));
  });
  afterAll(async () => {
    await closeState?.();
    await index?.close();
  });
  afterEach(() => setClock(null));

  describe.skipIf(!openIndex)("functions", () => {
    // A fresh agent per test; the index is shared, as in the service.
    const next = () => {
      agentId = `agent-${process.pid}-${Date.now()}-${agent++}`;
    };

    it("stores several entries of an agent in one call, each recalled and listed like a single store", async () => {
      next();
      const { entries } = await call<{ entries: Entry[] }>("memory::store_many", {
        agentId,
        entries: [
          { content: "The launch moved to Friday", role: "user", sessionId: "s1" },
          { content: "Noted: Friday it is", role: "assistant", sessionId: "s1" },
        ],
      });
      expect(entries.map((entry) => [entry.role, entry.sessionId])).toEqual([
        ["user", "s1"],
        ["assistant", "s1"],
      ]);
      expect((await recall("friday")).map((entry) => entry.id).sort()).toEqual(
        entries.map((entry) => entry.id).sort(),
      );
      await expect(call("memory::store_many", { agentId, entries: [] })).rejects.toThrow(/at least one/);
    });

    it("stores an entry with an id, the defaults and a creation time", async () => {
      next();
      setClock({ now: () => Date.parse("2026-03-01T10:00:00.000Z") });
      const entry = await store({ content: "Ada prefers tea over coffee" });
      expect(entry).toEqual({
        id: expect.stringMatching(/^mem-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        agentId,
        sessionId: null,
        role: "note",
        content: "Ada prefers tea over coffee",
        createdAt: "2026-03-01T10:00:00.000Z",
      });
      const full = await store({ content: "hello", sessionId: "sess-1", role: "user" });
      expect(full).toMatchObject({ sessionId: "sess-1", role: "user" });
      expect(full.id).not.toBe(entry.id);
    });

    it("recalls entries ranked by relevance, with their score", async () => {
      next();
      await store({ content: "The deployment of the billing service failed on Friday", role: "assistant" });
      await store({ content: "Billing service deployment rescheduled to Monday", sessionId: "s2" });
      await store({ content: "Lunch order: two pizzas" });
      const results = await recall("billing deployment monday");
      expect(results.map((entry) => entry.content)).toEqual([
        "Billing service deployment rescheduled to Monday",
        "The deployment of the billing service failed on Friday",
      ]);
      expect(Object.keys(results[0])).toEqual([
        "id",
        "agentId",
        "sessionId",
        "role",
        "content",
        "score",
        "relevance",
        "createdAt",
        "matchedBy",
      ]);
      // Without an embedding model (here: no agents worker at all) recall is by text alone.
      expect(results[0]).toMatchObject({ agentId, sessionId: "s2", role: "note", matchedBy: ["text"] });
      expect(results[0].score).toBeGreaterThan(results[1].score as number);
      // All three words of five: coverage 1, precision 3/5; two of three, of five: 2/3 × (0.5 + 2/5 × 0.5).
      expect(results[0].score).toBeCloseTo(0.8, 6);
      expect(results[1].score).toBeCloseTo((2 / 3) * (0.5 + (2 / 5) * 0.5), 6);
      expect(await recall("pizza")).toHaveLength(1);
      expect(await recall("sushi")).toEqual([]);
    });

    it("scores an exact match 1, whatever the other memories hold (common words included)", async () => {
      next();
      for (let i = 0; i < 30; i++) await store({ content: `hi there, note number ${i}` });
      await store({ content: "Hi!" });
      const [best] = await recall("hi");
      expect(best).toMatchObject({ content: "Hi!", score: 1 });
    });

    it("recalls the newer of two equal memories first", async () => {
      next();
      setClock({ now: () => Date.parse("2026-01-01T00:00:00.000Z") });
      const old = await store({ content: "the office wifi password is hunter2" });
      setClock({ now: () => Date.parse("2026-02-01T00:00:00.000Z") });
      const recent = await store({ content: "the office wifi password is hunter2" });
      setClock({ now: () => Date.parse("2026-02-02T00:00:00.000Z") });
      expect((await recall("wifi password")).map((entry) => entry.id)).toEqual([recent.id, old.id]);
    });

    it("keeps agents apart and forgets one agent without touching another", async () => {
      next();
      const other = `${agentId}-other`;
      await store({ content: "secret plan alpha" });
      await store({ content: "secret plan beta" });
      await call("memory::store", { agentId: other, content: "secret plan gamma" });
      expect((await recall("secret")).map((entry) => entry.content).sort()).toEqual([
        "secret plan alpha",
        "secret plan beta",
      ]);
      expect(await call("memory::forget_agent", { agentId })).toEqual({ deleted: 2 });
      expect(await recall("secret")).toEqual([]);
      expect(await call("memory::forget_agent", { agentId })).toEqual({ deleted: 0 });
      const theirs = await call<{ results: Entry[] }>("memory::recall", { agentId: other, query: "secret" });
      expect(theirs.results.map((entry) => entry.content)).toEqual(["secret plan gamma"]);
    });

    it("lists no other agent's memories through a forged cursor, and refuses a bad one naming cursor", async () => {
      next();
      await store({ content: "my own note" });
      // Another agent's (another realm's, say) memory, stored later: the next scope on SQLite.
      await call("memory::store", { agentId: `${agentId}-victim`, content: "their secret" });
      const nul = Buffer.from(JSON.stringify([Date.now(), "nul\u0000"])).toString("base64url");
      for (const cursor of ["9223372036854775807", "9999999999999999999", nul]) {
        const answer = await call<{ memories: Entry[] }>("memory::list", { agentId, cursor }).catch(
          (error: unknown) => error as Error,
        );
        if (answer instanceof Error) {
          expect(answer).toBeInstanceOf(AppError);
          expect((answer as AppError).code).toBe("validation");
          expect(answer.message).toMatch(/^cursor: /);
        } else {
          expect(answer.memories.map((entry) => entry.content)).not.toContain("their secret");
        }
      }
    });

    it("returns ten results by default, up to the limit asked", async () => {
      next();
      for (let i = 0; i < 15; i++) await store({ content: `standup note number ${i}` });
      expect(await recall("standup")).toHaveLength(10);
      expect(await recall("standup", { limit: 3 })).toHaveLength(3);
      expect(await recall("standup", { limit: 200 })).toHaveLength(15);
    });

    it("stores content of exactly 32 KiB and any script", async () => {
      next();
      const big = `${"é".repeat(16_383)}ok`;
      expect(Buffer.byteLength(big)).toBe(32 * 1024);
      await store({ content: big });
      await store({ content: "Treffen in der Straße 😀 日本語" });
      expect((await recall("straße 日本語"))[0].content).toBe("Treffen in der Straße 😀 日本語");
    });

    it("never fails on arbitrary recall queries", async () => {
      next();
      await store({ content: "green tea in a kettle" });
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: "binary", minLength: 1, maxLength: 80 }), async (query) => {
          const results = await recall(query);
          return results.every((entry) => entry.content === "green tea in a kettle");
        }),
        { numRuns: 50 },
      );
    });

    it.each([
      ["memory::store", { content: "x" }, "agentId"],
      ["memory::store", { agentId: "", content: "x" }, "agentId"],
      ["memory::store", { agentId: "a", content: "" }, "content"],
      ["memory::store", { agentId: "a", content: "é".repeat(16_385) }, "content"],
      ["memory::store", { agentId: "a", content: "nul\u0000" }, "content"],
      ["memory::store", { agentId: "a", content: "x", role: "robot" }, "role"],
      ["memory::store", { agentId: "a", content: "x", sessionId: "" }, "sessionId"],
      ["memory::store", { agentId: "a", content: "x", importance: 1 }, "(root)"],
      ["memory::recall", { agentId: "a" }, "query"],
      ["memory::recall", { agentId: "a", query: "" }, "query"],
      ["memory::recall", { agentId: "a", query: "q".repeat(2001) }, "query"],
      ["memory::recall", { agentId: "a", query: "q", limit: 0 }, "limit"],
      ["memory::recall", { agentId: "a", query: "q", limit: 201 }, "limit"],
      ["memory::forget_agent", {}, "agentId"],
    ])("%s rejects %j as a validation error naming %s", async (functionId, payload, field) => {
      const error = await call(functionId, payload).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("validation");
      expect((error as AppError).message.startsWith(`${field}:`)).toBe(true);
    });
  });
});
