import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { Client } from "pg";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { gcra, gcraParameters } from "../../../src/http/rate-limit/gcra.ts";
import { PostgresRateLimitStore } from "../../../src/http/rate-limit/postgres-store.ts";
import { MemoryRateLimitStore } from "../../../src/http/rate-limit/store.ts";
import { dropSchema, findTestPostgres, uniqueSchema } from "../../engine/state/contract.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping PostgreSQL rate limit store tests: ${found.reason}`);
const url = found.url ?? "";
const schema = uniqueSchema();
const HOUR_MS = 3_600_000;
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

describe.skipIf(found.url === null)("PostgresRateLimitStore", () => {
  // Two stores on one database stand for two cluster nodes.
  let nodeA: PostgresRateLimitStore;
  let nodeB: PostgresRateLimitStore;
  const key = () => `read:${randomUUID()}`;

  // Fresh stores per test: a store sweeps rows older than the `now` it was last given, in the
  // background, and the tests' clocks jump (2030, hours ahead): a sweep a test started must be over
  // (close() waits for it) before the next test's rows exist.
  beforeEach(async () => {
    [nodeA, nodeB] = await Promise.all([
      PostgresRateLimitStore.open({ connectionString: url, schema, max: 10 }),
      PostgresRateLimitStore.open({ connectionString: url, schema, max: 10 }),
    ]);
  });

  afterEach(async () => {
    await nodeA?.close();
    await nodeB?.close();
  });

  afterAll(async () => {
    await dropSchema(url, schema);
  });

  it("decides exactly as gcra() for a sequence of requests, denials and recoveries", async () => {
    const k = key();
    let tat: number | undefined;
    // limit 3 per second: an interval of 333.33… ms, so the float arithmetic must agree exactly.
    const times = [0, 0, 1, 2, 100, 333, 334, 400, 667, 1000, 1000, 1001, 5000, 5000, 5000, 5000, 5001];
    for (const offset of times) {
      const now = T0 + offset;
      const expected = gcra(tat, now, 3, 1000);
      if (expected.allowed) tat = expected.tat;
      expect(await nodeA.consume(k, now, 3, 1000), `at +${offset} ms`).toEqual(expected);
    }
  });

  it("matches the in-memory store on arbitrary request sequences", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 10 * HOUR_MS }),
        fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: 1, maxLength: 25 }),
        async (limit, periodMs, gaps) => {
          const k = key();
          const memory = new MemoryRateLimitStore();
          let now = T0;
          for (const gap of gaps) {
            now += gap;
            const node = gap % 2 === 0 ? nodeA : nodeB;
            expect(await node.consume(k, now, limit, periodMs)).toEqual(
              memory.consume(k, now, limit, periodMs),
            );
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it("shares one budget between nodes: limit N allows exactly N across both", async () => {
    const k = key();
    const decisions = [];
    for (let i = 0; i < 12; i++) decisions.push(await (i % 2 ? nodeB : nodeA).consume(k, T0 + i, 5, HOUR_MS));
    expect(decisions.map((d) => d.allowed)).toEqual([...Array(5).fill(true), ...Array(7).fill(false)]);
    expect(decisions.map((d) => d.remaining).slice(0, 6)).toEqual([4, 3, 2, 1, 0, 0]);
    // The denial on node B is explained by the TAT node A wrote.
    const { interval, tolerance } = gcraParameters(5, HOUR_MS);
    expect(decisions[5].retryAfterMs).toBe(Math.ceil(T0 + 5 * interval - (T0 + 5) - tolerance));
  });

  it("allows exactly N when requests race concurrently on both nodes", async () => {
    for (const limit of [1, 5, 7, 20, 60]) {
      const k = key();
      const decisions = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 ? nodeB : nodeA).consume(k, T0, limit, HOUR_MS)),
      );
      expect(decisions.filter((d) => d.allowed)).toHaveLength(limit);
      for (const denied of decisions.filter((d) => !d.allowed)) {
        expect(denied).toMatchObject({ remaining: 0, limit });
        expect(denied.retryAfterMs).toBeGreaterThan(0);
        expect(denied.resetMs).toBeGreaterThanOrEqual(denied.retryAfterMs);
      }
      // Allowed decisions saw every TAT once: their remaining counts are limit-1 … 0, each once.
      expect(
        decisions
          .filter((d) => d.allowed)
          .map((d) => d.remaining)
          .sort((a, b) => a - b),
      ).toEqual(Array.from({ length: limit }, (_, i) => i));
    }
  });

  it("under concurrency allows exactly as many as gcra() allows one after another", async () => {
    for (const limit of [3, 7, 60]) {
      const k = key();
      const memory = new MemoryRateLimitStore();
      const sequential = Array.from({ length: limit + 5 }, () => memory.consume(k, T0, limit, HOUR_MS));
      const decisions = await Promise.all(
        Array.from({ length: limit + 5 }, (_, i) => (i % 2 ? nodeB : nodeA).consume(k, T0, limit, HOUR_MS)),
      );
      expect(decisions.filter((d) => d.allowed)).toHaveLength(sequential.filter((d) => d.allowed).length);
    }
  });

  it("keeps separate budgets per key", async () => {
    const [a, b] = [key(), key()];
    expect((await nodeA.consume(a, T0, 1, HOUR_MS)).allowed).toBe(true);
    expect((await nodeA.consume(a, T0, 1, HOUR_MS)).allowed).toBe(false);
    expect((await nodeB.consume(b, T0, 1, HOUR_MS)).allowed).toBe(true);
  });

  it("sweeps rows whose TAT has passed and keeps the rest", async () => {
    const [old, live] = [key(), key()];
    const farFuture = T0 + 1000 * HOUR_MS;
    await nodeA.consume(old, T0, 10, 1000); // TAT = T0 + 100 ms
    await nodeA.consume(live, farFuture, 1, HOUR_MS); // TAT an hour after farFuture
    await nodeA.sweep(farFuture + 10 * 60_000);
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT key FROM "${schema}".rate_limits WHERE key = ANY($1)`, [
        [old, live],
      ]);
      expect(rows).toEqual([{ key: live }]);
    } finally {
      await client.end();
    }
    // A swept key starts afresh.
    expect(await nodeB.consume(old, farFuture, 10, 1000)).toEqual(gcra(undefined, farFuture, 10, 1000));
  });

  it("reports an unreachable database as unavailable (503), not as an internal error", async () => {
    const broken = new PostgresRateLimitStore({ connectionString: "postgres://nobody@127.0.0.1:1/none" });
    try {
      await expect(broken.consume(key(), T0, 1, HOUR_MS)).rejects.toMatchObject({ code: "unavailable" });
    } finally {
      await broken.close();
    }
  });
});
