import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteTextIndex } from "../../../src/engine/search/sqlite.ts";
import { NODE } from "../../helpers/process.ts";

const dir = mkdtempSync(join(tmpdir(), "agentos-scope-docs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const createdAt = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
const docs = (from: number, length: number) =>
  Array.from({ length }, (_, i) => ({
    id: `d${from + i}`,
    doc: { text: `entry ${from + i}`, data: null, createdAt: createdAt(from + i) },
  }));

/** What the file keeps per scope, beside what a range count of its documents finds (another connection). */
function kept(path: string): Array<{ scope: string; docs: number | null; counted: number }> {
  const db = new DatabaseSync(path);
  try {
    return db
      .prepare(
        `SELECT scope, docs, (SELECT count(*) FROM search_docs
           WHERE rowid BETWEEN num * (1 << 41) AND num * (1 << 41) + (1 << 41) - 1) AS counted
         FROM search_scopes ORDER BY scope`,
      )
      .all() as Array<{ scope: string; docs: number | null; counted: number }>;
  } finally {
    db.close();
  }
}

/** Every scope's kept count is its documents'. */
function expectExact(path: string): void {
  const rows = kept(path);
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) expect(row.docs, row.scope).toBe(row.counted);
}

/** Makes a file what code from before the counts left: no column. */
function makeLegacy(path: string): void {
  const db = new DatabaseSync(path);
  db.exec("DROP INDEX search_scopes_uncounted; ALTER TABLE search_scopes DROP COLUMN docs");
  db.close();
}

/** Runs `code` (a module body, `index` open on the file) in another process: a CLI command on the file. */
function elsewhere(path: string, code: string): void {
  const script = `
    import { SqliteTextIndex } from ${JSON.stringify(new URL("../../../src/engine/search/sqlite.ts", import.meta.url).href)};
    const index = new SqliteTextIndex(${JSON.stringify(path)});
    ${code}
    await index.close();`;
  const child = spawnSync(NODE, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(child.status, child.stderr).toBe(0);
}

async function filled(name: string): Promise<string> {
  const path = join(dir, name);
  const index = new SqliteTextIndex(path);
  await index.putMany("m", "a", docs(0, 30));
  await index.putMany("m", "b", docs(0, 12));
  await index.put("notes", "a", "x", { text: "other index", data: null, createdAt: createdAt(0) });
  await index.close();
  return path;
}

describe("SqliteTextIndex per-scope counts", () => {
  it("keeps the count in the file, exact under every kind of write and after reopening", async () => {
    const path = join(dir, "writes.db");
    const index = new SqliteTextIndex(path);
    try {
      await Promise.all([
        index.putMany("m", "a", docs(0, 50)),
        index.putMany("m", "a", docs(25, 50)), // half of them replaced
        index.putMany("m", "b", docs(0, 10)),
        index.put("m", "c", "only", { text: "one", data: null, createdAt: createdAt(1) }),
        index.delete("m", "a", "d3"),
      ]);
      await index.delete("m", "b", "d0");
      await index.delete("m", "b", "missing");
      await index.deleteScope("m", "c");
      expectExact(path);
      expect(await index.count("m", "a")).toBe(74);
      expect(await index.count("m", "b")).toBe(9);
      expect(await index.count("m", "c")).toBe(0);
    } finally {
      await index.close();
    }
    const again = new SqliteTextIndex(path);
    try {
      expect(await again.count("m", "a")).toBe(74);
      expect(await again.count("m", "b")).toBe(9);
      expectExact(path);
    } finally {
      await again.close();
    }
  });

  it("counts what another process writes into the file while it is open", async () => {
    const path = await filled("other.db");
    const index = new SqliteTextIndex(path);
    try {
      expect(await index.count("m", "a")).toBe(30);
      elsewhere(
        path,
        `await index.putMany("m", "a", ${JSON.stringify(docs(28, 5))});
         await index.delete("m", "a", "d0");
         await index.deleteScope("m", "b");
         await index.put("m", "new", "x", ${JSON.stringify(docs(0, 1)[0].doc)});`,
      );
      expect(await index.count("m", "a")).toBe(32);
      expect(await index.count("m", "b")).toBe(0);
      expect(await index.count("m", "new")).toBe(1);
      expectExact(path);
    } finally {
      await index.close();
    }
  });

  // Code from before the counts, run on a file since counted (an older CLI), keeps the table's total only.
  it("counts every scope again when a writer that keeps no scope counts changed them", async () => {
    const path = await filled("older-writer.db");
    const db = new DatabaseSync(path);
    const { num } = db.prepare("SELECT num FROM search_scopes WHERE idx = 'm' AND scope = 'a'").get() as {
      num: number;
    };
    db.prepare(
      `INSERT INTO search_docs (rowid, idx, scope, id, data, created_at, created_ms)
       VALUES (? * (1 << 41) + 1, 'm', 'a', 'older', 'null', ?, 0)`,
    ).run(num, createdAt(0));
    db.exec("UPDATE search_meta SET value = value + 1 WHERE key = 'docs'");
    db.exec("DELETE FROM search_docs WHERE idx = 'm' AND scope = 'b' AND id IN ('d1', 'd2')");
    db.exec("UPDATE search_meta SET value = value - 2 WHERE key = 'docs'");
    db.close();
    const index = new SqliteTextIndex(path);
    try {
      expectExact(path);
      expect(await index.count("m", "a")).toBe(31);
      expect(await index.count("m", "b")).toBe(10);
    } finally {
      await index.close();
    }
  });

  it("counts every scope of a file from before the counts when it opens", async () => {
    const path = await filled("legacy.db");
    makeLegacy(path);
    const index = new SqliteTextIndex(path);
    try {
      expectExact(path);
      expect(await index.count("m", "a")).toBe(30);
      expect(await index.count("notes", "a")).toBe(1);
      await index.putMany("m", "a", docs(30, 5));
      expect(await index.count("m", "a")).toBe(35);
      expectExact(path);
    } finally {
      await index.close();
    }
  });

  it("finishes a count interrupted part way, answering exactly meanwhile", async () => {
    const path = await filled("interrupted.db");
    // The start-up stopped after counting one scope: the others are still marked uncounted (NULL).
    const db = new DatabaseSync(path);
    db.exec("UPDATE search_scopes SET docs = NULL WHERE scope = 'b' OR idx = 'notes'");
    db.close();
    const index = new SqliteTextIndex(path);
    try {
      expectExact(path);
      expect(await index.count("m", "b")).toBe(12);
      // A scope left uncounted (by a process of older code since) is counted by its range until next opened.
      const raw = new DatabaseSync(path);
      raw.exec("UPDATE search_scopes SET docs = NULL WHERE scope = 'b'");
      raw.close();
      await index.putMany("m", "b", docs(100, 3));
      expect(await index.count("m", "b")).toBe(15);
    } finally {
      await index.close();
    }
    const again = new SqliteTextIndex(path);
    try {
      expectExact(path);
      expect(await again.count("m", "b")).toBe(15);
    } finally {
      await again.close();
    }
  });

  it("counts again from scratch when the kept counts and the table's disagree, and then agrees", async () => {
    const path = await filled("disagree.db");
    const db = new DatabaseSync(path);
    db.exec("UPDATE search_scopes SET docs = 999; UPDATE search_meta SET value = 7 WHERE key = 'docs'");
    db.close();
    const index = new SqliteTextIndex(path);
    try {
      expectExact(path);
      expect(await index.count("m", "a")).toBe(30);
      await index.delete("m", "a", "d0");
      expect(await index.count("m", "a")).toBe(29);
    } finally {
      await index.close();
    }
    const check = new DatabaseSync(path);
    const { total } = check.prepare("SELECT value AS total FROM search_meta WHERE key = 'docs'").get() as {
      total: number;
    };
    check.close();
    expect(total).toBe(29 + 12 + 1);
  });
});
