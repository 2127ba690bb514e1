import { createServer, type Socket } from "node:net";
import { Client } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import {
  type DatabaseTimeouts,
  DEFAULT_DATABASE_TIMEOUTS,
  poolSizes,
} from "../../../src/engine/state/pg-pool.ts";
import { PostgresStateStore } from "../../../src/engine/state/postgres.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { freezableProxy } from "../../helpers/pg-proxy.ts";
import { dropSchema, findTestPostgres, uniqueSchema } from "./contract.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping PostgreSQL timeout tests: ${found.reason}`);
const url = found.url ?? "";
const schema = uniqueSchema();

const timeouts = (changes: Partial<DatabaseTimeouts>): DatabaseTimeouts => ({
  ...DEFAULT_DATABASE_TIMEOUTS,
  ...changes,
});

/** A second session holding `lock` (SQL run in an open transaction) until `release` is called. */
async function holdLock(lock: string): Promise<{ release(): Promise<void> }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query("BEGIN");
  await client.query(lock);
  return {
    async release() {
      await client.query("ROLLBACK").catch(() => undefined);
      await client.end();
    },
  };
}

async function failure(attempt: Promise<unknown>): Promise<AppError> {
  const error = await attempt.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("database pool sizes", () => {
  it("share the node's total out, the state store getting the most", () => {
    const sizes = poolSizes(20);
    expect(sizes).toEqual({ search: 3, vector: 3, rateLimits: 2, pubsub: 2, state: 9 });
    // With the pub/sub listening connection, exactly the total.
    expect(Object.values(sizes).reduce((sum, size) => sum + size, 1)).toBe(20);
    expect(poolSizes(6)).toEqual({ search: 1, vector: 1, rateLimits: 1, pubsub: 1, state: 1 });
  });
});

describe.skipIf(found.url === null)("PostgreSQL time limits", () => {
  afterAll(() => dropSchema(url, schema));

  it("ends a write waiting on a row another session locked with a 503 naming the statement timeout", async () => {
    const store = await PostgresStateStore.open({
      connectionString: url,
      schema,
      max: 2,
      timeouts: timeouts({ statementMs: 300 }),
    });
    await store.set("locked", "k", 1);
    const lock = await holdLock(
      `SELECT * FROM "${schema}".state WHERE scope = 'locked' AND key = 'k' FOR UPDATE`,
    );
    try {
      const error = await failure(store.set("locked", "k", 2));
      expect(error.code).toBe("unavailable");
      expect(error.message).toMatch(/statement timeout \(AGENTOS_DATABASE_STATEMENT_TIMEOUT_MS\)/);
      // The store is usable again once the lock is gone.
      await lock.release();
      expect((await store.set("locked", "k", 3)).record.version).toBe(2);
    } finally {
      await lock.release().catch(() => undefined);
      await store.close();
    }
  }, 20_000);

  it("ends a query to a database that stopped answering", async () => {
    const proxy = await freezableProxy(new URL(url));
    const store = await PostgresStateStore.open({
      connectionString: proxy.url,
      schema,
      max: 1,
      timeouts: timeouts({ statementMs: 200 }),
    });
    try {
      await store.set("frozen", "k", 1);
      proxy.freeze();
      const error = await failure(store.get("frozen", "k"));
      expect(error.code).toBe("unavailable");
      expect(error.message).toMatch(/statement timeout/);
    } finally {
      await proxy.close();
      await store.close();
    }
  }, 20_000);

  it("ends a connection attempt the server never answers with a 503 naming the connect timeout", async () => {
    const silent: Socket[] = [];
    const server = createServer((socket) => silent.push(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const store = new PostgresStateStore({
      connectionString: `postgres://nobody@127.0.0.1:${port}/none`,
      timeouts: timeouts({ connectMs: 200 }),
    });
    try {
      const error = await failure(store.set("s", "k", 1));
      expect(error.code).toBe("unavailable");
      expect(error.message).toMatch(/connect timeout \(AGENTOS_DATABASE_CONNECT_TIMEOUT_MS\)/);
    } finally {
      await store.close();
      for (const socket of silent) socket.destroy();
      server.close();
    }
  }, 20_000);

  it("gives start-up migrations no statement timeout: a node waits for another node's", async () => {
    const fresh = uniqueSchema();
    // Another node migrating (it holds the migration lock) for longer than the statement timeout.
    const lock = await holdLock("SELECT pg_advisory_xact_lock(hashtext('agentos.migrations'))");
    const opening = PostgresStateStore.open({
      connectionString: url,
      schema: fresh,
      max: 1,
      timeouts: timeouts({ statementMs: 100 }),
    });
    // Seen below; a failure meanwhile must not count as unhandled.
    opening.catch(() => undefined);
    try {
      // The opening node is waiting on the lock: a statement timeout would have failed it by now.
      await waitForLockWaiter();
      await new Promise((resolve) => setTimeout(resolve, 400));
      await lock.release();
      const store = await opening;
      await store.set("s", "k", 1);
      await store.close();
    } finally {
      await lock.release().catch(() => undefined);
      await opening.then((store) => store.close()).catch(() => undefined);
      await dropSchema(url, fresh);
    }
  }, 20_000);
});

/** Until some session waits for an advisory lock. */
async function waitForLockWaiter(): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
      );
      if (rows[0].n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await client.end();
  }
}
