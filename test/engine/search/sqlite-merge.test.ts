import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteTextIndex } from "../../../src/engine/search/sqlite.ts";
import type { IdleMergeOptions } from "../../../src/engine/search/sqlite-merge.ts";
import { setClock } from "../../../src/shared/clock.ts";
import { textIndexContract } from "./contract.ts";

const dir = mkdtempSync(join(tmpdir(), "agentos-merge-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Merging a page at a time whenever the event loop is free: merge steps run between the contract's writes.
textIndexContract(
  "sqlite, merged while idle",
  () => new SqliteTextIndex(join(dir, "contract.db"), {}, { idleMs: 0, pagesPerStep: 1, minSegments: 2 }),
  300,
);

const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];
const DAY = 86_400_000;

/** `count` documents of a few scopes, each write its own transaction (so its own FTS5 segment). */
async function fill(index: SqliteTextIndex, from: number, count: number) {
  for (let i = from; i < from + count; i++) {
    const text = Array.from({ length: 6 }, (_, j) => WORDS[(i * 7 + j * 3) % WORDS.length]).join(" ");
    await index.put("memory", `agent-${i % 5}`, `m${i}`, {
      text: `${text} note${i % 13}`,
      data: i,
      createdAt: new Date(Date.UTC(2026, 0, 1) + (i % 300) * DAY).toISOString(),
    });
  }
}

const answers = async (index: SqliteTextIndex) =>
  Promise.all(
    ["alpha delta", "golf note3", "juliet", "bravo hotel note7"].map((query) =>
      index.search("memory", "agent-2", query, { limit: 10 }),
    ),
  );

const until = async (check: () => boolean, timeoutMs = 10_000) => {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

/**
 * Waits until the merge is recorded (by the step after the one that leaves one segment: `due()` turns
 * false already with that one, below minSegments), then checks the segment.
 */
async function mergedToOne(index: SqliteTextIndex) {
  await until(() => index.merger?.merged() === true);
  expect(index.merger?.segments()).toBe(1);
}

describe("SqliteTextIndex merged while idle", () => {
  const options: IdleMergeOptions = { idleMs: 50, pagesPerStep: 2 };
  // One "now" for every search, so that scores before and after a merge compare exactly.
  beforeEach(() => setClock({ now: () => Date.UTC(2026, 11, 1) }));
  afterEach(() => setClock(null));

  it("merges its segments into one once idle, answering every search as before", async () => {
    const index = new SqliteTextIndex(join(dir, "idle.db"), {}, options);
    try {
      await fill(index, 0, 200);
      expect(index.merger?.segments()).toBeGreaterThanOrEqual(4);
      const before = await answers(index);
      await mergedToOne(index);
      expect(await answers(index)).toEqual(before);
    } finally {
      await index.close();
    }
  });

  it("does not merge while writes keep coming", async () => {
    const index = new SqliteTextIndex(join(dir, "busy.db"), {}, { ...options, idleMs: 300 });
    try {
      await fill(index, 0, 100);
      // A write every 10 ms for a second: never 300 ms of rest.
      for (let round = 0; round < 100; round++) {
        await fill(index, 100 + round, 1);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(index.merger?.due()).toBe(true);
      await mergedToOne(index);
    } finally {
      await index.close();
    }
  });

  it("merges again only once an eighth of its rows is new, also after a restart", async () => {
    const path = join(dir, "regrowth.db");
    let index = new SqliteTextIndex(path, {}, options);
    try {
      await fill(index, 0, 400);
      await mergedToOne(index);
      await index.close();
      index = new SqliteTextIndex(path, {}, options);
      await fill(index, 400, 40);
      // 40 new of 440: under an eighth, left as FTS5's automerge keeps it.
      expect(index.merger?.segments()).toBeGreaterThanOrEqual(4);
      expect(index.merger?.due()).toBe(false);
      await fill(index, 440, 30);
      expect(index.merger?.due()).toBe(true);
      await mergedToOne(index);
    } finally {
      await index.close();
    }
  });

  it("is off unless asked for (a CLI command's index never merges)", async () => {
    const index = new SqliteTextIndex(join(dir, "off.db"));
    try {
      expect(index.merger).toBeUndefined();
    } finally {
      await index.close();
    }
  });
});
