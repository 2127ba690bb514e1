import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteTextIndex } from "../../../src/engine/search/sqlite.ts";
import { SqliteStateStore } from "../../../src/engine/state/sqlite.ts";
import { openSqliteConnection } from "../../../src/engine/state/sqlite-connection.ts";

const dir = mkdtempSync(join(tmpdir(), "agentos-sqlite-connection-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
const newFile = () => join(dir, `db-${files++}.db`);

/** What another process sees: a connection of its own, outside the shared one. */
function outsideCount(path: string): number {
  const other = new DatabaseSync(path);
  try {
    return Number((other.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n);
  } finally {
    other.close();
  }
}

/** A new file with a table of numbers, created in a turn of the event loop before the test's own. */
async function tableOfNumbers() {
  const path = newFile();
  const connection = openSqliteConnection(path);
  connection.db.exec("CREATE TABLE t (n INTEGER)");
  await new Promise((resolve) => setImmediate(resolve));
  return { path, connection, insert: connection.db.prepare("INSERT INTO t (n) VALUES (?)") };
}

describe("SqliteConnection", () => {
  it("commits a turn's first single-statement write at once and the rest together, each acknowledged once committed", async () => {
    const { path, connection, insert } = await tableOfNumbers();
    try {
      const writes = [1, 2, 3, 4].map((n) => connection.write(() => insert.run(n), true));
      // The first is committed; the others are made, not committed: nobody outside sees them, and
      // nobody has been told they are stored.
      expect(connection.db.isTransaction).toBe(true);
      expect(outsideCount(path)).toBe(1);
      await Promise.all(writes);
      expect(connection.db.isTransaction).toBe(false);
      expect(outsideCount(path)).toBe(4);
    } finally {
      await connection.close();
    }
  });

  it("commits a turn's writes of several statements together, the first one too", async () => {
    const { path, connection, insert } = await tableOfNumbers();
    try {
      const pair = (n: number) => () => {
        insert.run(n);
        insert.run(n + 1);
      };
      const writes = [0, 2, 4].map((n) => connection.write(pair(n)));
      expect(connection.db.isTransaction).toBe(true);
      expect(outsideCount(path)).toBe(0);
      await Promise.all(writes);
      expect(outsideCount(path)).toBe(6);
    } finally {
      await connection.close();
    }
  });

  it("undoes only the failing write of a turn and keeps the others", async () => {
    const path = newFile();
    const connection = openSqliteConnection(path);
    try {
      connection.db.exec("CREATE TABLE t (n INTEGER)");
      const insert = connection.db.prepare("INSERT INTO t (n) VALUES (?)");
      const first = connection.write(() => insert.run(0));
      const ok = connection.write(() => insert.run(1));
      const failed = connection.write(() => {
        insert.run(2);
        throw new Error("refused half-way");
      });
      const after = connection.write(() => insert.run(3));
      await expect(failed).rejects.toThrow("refused half-way");
      await Promise.all([first, ok, after]);
      // The first write of a turn is undone as a whole too.
      await expect(
        connection.write(() => {
          insert.run(9);
          throw new Error("refused first");
        }),
      ).rejects.toThrow("refused first");
      const rows = connection.db.prepare("SELECT n FROM t ORDER BY n").all() as Array<{ n: number }>;
      expect(rows.map((row) => row.n)).toEqual([0, 1, 3]);
    } finally {
      await connection.close();
    }
  });

  it("is one connection for the state store and the text index of one file, closed with the last of them", async () => {
    const path = newFile();
    const state = new SqliteStateStore(path);
    const text = new SqliteTextIndex(path);
    await state.set("s", "k", { v: 1 });
    await text.put("memory", "agent-1", "m1", {
      text: "hello there",
      data: null,
      createdAt: new Date().toISOString(),
    });
    await state.close();
    // The index still works on the shared connection after the state store let go of it.
    expect(await text.count("memory", "agent-1")).toBe(1);
    await text.close();
    const reopened = new SqliteStateStore(path);
    try {
      expect((await reopened.get("s", "k"))?.value).toEqual({ v: 1 });
    } finally {
      await reopened.close();
    }
  });

  it("keeps the WAL bounded under steady writes, the checkpoints made off the service's thread", async () => {
    const path = newFile();
    const store = new SqliteStateStore(path);
    try {
      const value = "x".repeat(4000);
      // About 40 MiB of writes, in turns of 50 (each turn one commit), with no pause for the WAL to drain.
      for (let turn = 0; turn < 200; turn++) {
        await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            store.set("bulk", `k${(turn * 50 + i) % 2000}`, { value, turn }),
          ),
        );
      }
      expect(statSync(`${path}-wal`).size).toBeLessThan(40 * 1024 * 1024);
      expect((await store.get("bulk", "k1999"))?.value).toMatchObject({ turn: 199 });
    } finally {
      await store.close();
    }
  });

  it("keeps the WAL bounded for a writer that writes once per turn, each write committed on its own", async () => {
    const path = newFile();
    const store = new SqliteStateStore(path);
    try {
      const value = "x".repeat(4000);
      for (let i = 0; i < 10_000; i++) {
        await store.set("lone", `k${i % 2000}`, { value, i });
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(statSync(`${path}-wal`).size).toBeLessThan(40 * 1024 * 1024);
    } finally {
      await store.close();
    }
  });

  it("commits what is pending when the last store closes", async () => {
    const path = newFile();
    const store = new SqliteStateStore(path);
    const write = store.set("s", "k", "kept");
    await store.close();
    await write;
    const reopened = new SqliteStateStore(path);
    try {
      expect((await reopened.get("s", "k"))?.value).toBe("kept");
    } finally {
      await reopened.close();
    }
  });
});
