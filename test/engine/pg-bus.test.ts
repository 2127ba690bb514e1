import { Client } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgBus } from "../../src/engine/pg-bus.ts";
import { AppError } from "../../src/shared/errors.ts";
import { freezableProxy } from "../helpers/pg-proxy.ts";
import { dropSchema, findTestPostgres, sqlOnce, uniqueSchema } from "./state/contract.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping PostgreSQL pub/sub tests: ${found.reason}`);
const url = found.url ?? "";
const schema = uniqueSchema();

type Received = Array<{ topic: string; data: unknown }>;

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for messages");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.skipIf(found.url === null)("PgBus", () => {
  // Two buses on one database stand for two cluster nodes. The channel is the run's schema name, so
  // concurrent test runs on the same server do not hear each other.
  let nodeA: PgBus;
  let nodeB: PgBus;
  const atA: Received = [];
  const atB: Received = [];
  const reset = () => {
    atA.length = 0;
    atB.length = 0;
  };

  beforeAll(async () => {
    nodeA = await PgBus.open({ connectionString: url, schema, channel: schema });
    nodeB = await PgBus.open({ connectionString: url, schema, channel: schema });
    nodeA.onMessage((topic, data) => atA.push({ topic, data }));
    nodeB.onMessage((topic, data) => atB.push({ topic, data }));
  });

  afterAll(async () => {
    await nodeA?.close();
    await nodeB?.close();
    await dropSchema(url, schema);
  });

  it("delivers a message published on one node to the listeners of every node", async () => {
    reset();
    const data = { text: "héllo 😀", nul: "a\u0000b", n: Number.MAX_SAFE_INTEGER, list: [1, null, true] };
    await nodeA.publish("greeting", data);
    await waitFor(() => atA.length === 1 && atB.length === 1);
    expect(atB).toEqual([{ topic: "greeting", data }]);
    expect(atA).toEqual([{ topic: "greeting", data }]);
  });

  it("carries messages too large for NOTIFY through the table", async () => {
    reset();
    const data = { blob: "x".repeat(100_000), emoji: "😀".repeat(3000) };
    await nodeB.publish("large", data);
    await waitFor(() => atA.length === 1 && atB.length === 1);
    expect(atA[0]).toEqual({ topic: "large", data });
    expect(atB[0]).toEqual({ topic: "large", data });
  });

  it("switches to the table exactly at the NOTIFY size limit", async () => {
    reset();
    const stored = async () => {
      const client = new Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM "${schema}".pubsub_messages`);
      await client.end();
      return rows[0].n as number;
    };
    const before = await stored();
    // {"topic":"t","data":"..."} is 23 bytes around the string: 7999 bytes still fit in NOTIFY.
    const sizes = [7999 - 23, 8000 - 23, 8001 - 23];
    for (const size of sizes) await nodeA.publish("t", "y".repeat(size));
    await waitFor(() => atB.length === 3);
    expect(atB.map((message) => (message.data as string).length)).toEqual(sizes);
    expect((await stored()) - before).toBe(2);
  });

  it("keeps publication order when small and large messages mix", async () => {
    reset();
    const sequence = Array.from({ length: 20 }, (_, i) =>
      i % 3 === 0 ? `${i}:${"z".repeat(20_000)}` : `${i}`,
    );
    for (const data of sequence) await nodeA.publish("ordered", data);
    await waitFor(() => atB.length === sequence.length && atA.length === sequence.length);
    expect(atB.map((message) => message.data)).toEqual(sequence);
    expect(atA.map((message) => message.data)).toEqual(sequence);
  });

  it("keeps delivering to other listeners when one throws", async () => {
    reset();
    const extra = await PgBus.open({ connectionString: url, schema, channel: schema });
    const seen: unknown[] = [];
    extra.onMessage(() => {
      throw new Error("listener bug");
    });
    extra.onMessage((_topic, data) => seen.push(data));
    try {
      await nodeA.publish("robust", 1);
      await waitFor(() => seen.length === 1);
    } finally {
      await extra.close();
    }
  });

  it("does not deliver across channels", async () => {
    reset();
    const other = await PgBus.open({ connectionString: url, schema, channel: `${schema}_other` });
    try {
      await other.publish("elsewhere", 1);
      await nodeA.publish("here", 2);
      await waitFor(() => atB.length >= 1);
      expect(atB).toEqual([{ topic: "here", data: 2 }]);
    } finally {
      await other.close();
    }
  });

  it("deletes stored bodies older than ten minutes and keeps recent ones", async () => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const table = `"${schema}".pubsub_messages`;
      await client.query(
        `INSERT INTO ${table} (body, created_at) VALUES ('old', now() - interval '11 minutes')`,
      );
      await client.query(`INSERT INTO ${table} (body) VALUES ('recent')`);
      expect(await nodeA.cleanup()).toBeGreaterThanOrEqual(1);
      const { rows } = await client.query(`SELECT body FROM ${table} WHERE body IN ('old', 'recent')`);
      expect(rows).toEqual([{ body: "recent" }]);
    } finally {
      await client.end();
    }
  });

  it("stops delivering after close, and closes idempotently", async () => {
    const closing = await PgBus.open({ connectionString: url, schema, channel: schema });
    const seen: unknown[] = [];
    closing.onMessage((_topic, data) => seen.push(data));
    await closing.close();
    await closing.close();
    reset();
    await nodeA.publish("after-close", 1);
    await waitFor(() => atB.length === 1);
    expect(seen).toEqual([]);
    await expect(closing.publish("t", 1)).rejects.toThrow(/closed/);
  });
});

describe.skipIf(found.url === null)("PgBus channel per schema", () => {
  const schemaA = uniqueSchema();
  const schemaB = uniqueSchema();

  afterAll(async () => {
    await dropSchema(url, schemaA);
    await dropSchema(url, schemaB);
  });

  it("keeps deployments in different schemas of one database apart, and nodes of one schema together", async () => {
    const a1 = await PgBus.open({ connectionString: url, schema: schemaA });
    const a2 = await PgBus.open({ connectionString: url, schema: schemaA });
    const b1 = await PgBus.open({ connectionString: url, schema: schemaB });
    const heard = { a2: [] as unknown[], b1: [] as unknown[] };
    a2.onMessage((_topic, data) => heard.a2.push(data));
    b1.onMessage((_topic, data) => heard.b1.push(data));
    try {
      await a1.publish("t", { from: "A" });
      await b1.publish("t", { from: "B" });
      await waitFor(() => heard.a2.length === 1 && heard.b1.length === 1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(heard).toEqual({ a2: [{ from: "A" }], b1: [{ from: "B" }] });
    } finally {
      await Promise.all([a1.close(), a2.close(), b1.close()]);
    }
  });
});

/** The pid of the session last opened from `ports` (a bus opens its listening connection last). */
async function lastSessionOf(ports: number[]): Promise<number> {
  const rows = await sql<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1) ORDER BY backend_start DESC LIMIT 1",
    [ports],
  );
  return rows[0].pid;
}

async function eventuallyGone(pid: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if ((await sql("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`session ${pid} is still there`);
}

const sql = <T>(text: string, values: unknown[]) => sqlOnce<T>(url, text, values);

describe.skipIf(found.url === null)("PgBus listening connection", () => {
  it("fails a publication with 503 (unavailable) once the database cannot be reached", async () => {
    const proxy = await freezableProxy(new URL(url));
    const bus = await PgBus.open({ connectionString: proxy.url, channel: uniqueSchema() });
    try {
      await proxy.close();
      for (const data of ["small", "x".repeat(10_000)]) {
        const error = await bus.publish("t", data).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).code).toBe("unavailable");
      }
    } finally {
      await bus.close();
    }
  });

  it("replaces a listening connection that silently stopped answering, and hears again", async () => {
    const proxy = await freezableProxy(new URL(url));
    const channel = uniqueSchema();
    const listening = await PgBus.open({ connectionString: proxy.url, channel, healthCheckMs: 200 });
    const publisher = await PgBus.open({ connectionString: url, channel });
    const heard: unknown[] = [];
    listening.onMessage((_topic, data) => heard.push(data));
    try {
      await publisher.publish("t", "before");
      await waitFor(() => heard.length === 1);
      const listenerPid = await lastSessionOf(proxy.ports());
      proxy.freeze();
      // Published until the listener hears one again: the frozen connection never delivers.
      let n = 0;
      await waitFor(() => {
        if (heard.length === 1) void publisher.publish("t", `after ${n++}`);
        return heard.length > 1;
      }, 20_000);
      expect(heard[1]).toMatch(/^after /);
      // The server still held the dead connection's session: a connection slot, and a listener that
      // keeps the NOTIFY queue from being truncated. It is ended too.
      await eventuallyGone(listenerPid);
    } finally {
      await publisher.close();
      await proxy.close();
      await listening.close();
    }
  }, 30_000);
});
