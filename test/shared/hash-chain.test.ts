import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StateClient } from "../../src/engine/state/client.ts";
import { setClock } from "../../src/shared/clock.ts";
import { type ChainEntry, entryHash, GENESIS_HASH, HashChain } from "../../src/shared/hash-chain.ts";
import { newId } from "../../src/shared/ids.ts";
import { createStateEngine } from "../helpers/engine.ts";

type Fields = { action: string; n?: number };

const SCOPE = "chain_entries";
const HEADS = "chain_heads";

let state: StateClient;
let close: () => Promise<void>;

beforeEach(() => {
  ({ state, close } = createStateEngine());
});

afterEach(async () => {
  setClock(null);
  await close();
});

function chain(chainId = "realm-a"): HashChain<Fields> {
  return new HashChain<Fields>(state, { scope: SCOPE, headScope: HEADS, chainId });
}

async function appendMany(target: HashChain<Fields>, count: number): Promise<ChainEntry<Fields>[]> {
  const entries: ChainEntry<Fields>[] = [];
  for (let n = 1; n <= count; n++) entries.push(await target.append({ action: `step-${n}`, n }));
  return entries;
}

async function allEntries(target: HashChain<Fields>): Promise<ChainEntry<Fields>[]> {
  const entries: ChainEntry<Fields>[] = [];
  let cursor: string | undefined;
  do {
    const page = await target.read({ order: "asc", limit: 500, cursor });
    entries.push(...page.entries);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return entries;
}

describe("hash chain append", () => {
  it("links each entry to the previous one, starting from the genesis hash", async () => {
    const [first, second] = await appendMany(chain(), 2);
    expect(first).toMatchObject({ seq: 1, action: "step-1", prevHash: GENESIS_HASH });
    expect(second.prevHash).toBe(first.hash);
    expect(first.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(entryHash(first)).toBe(first.hash);
  });

  it("stores entries under zero-padded sequence keys and advances the head", async () => {
    const target = chain();
    const entries = await appendMany(target, 3);
    expect(await state.get(SCOPE, "realm-a:00000000000000000003")).toEqual(entries[2]);
    expect(await target.head()).toEqual({ seq: 3, hash: entries[2].hash, timestamp: entries[2].timestamp });
  });

  it("serialises 50 concurrent appends into one unbroken chain without forks", async () => {
    const target = chain();
    const appended = await Promise.all(
      Array.from({ length: 50 }, (_, n) => target.append({ action: "a", n })),
    );
    expect(new Set(appended.map((entry) => entry.seq)).size).toBe(50);
    const stored = await allEntries(target);
    expect(stored.map((entry) => entry.seq)).toEqual(Array.from({ length: 50 }, (_, n) => n + 1));
    expect(stored.map((entry) => entry.n).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([...Array(50).keys()]);
    for (let i = 1; i < stored.length; i++) expect(stored[i].prevHash).toBe(stored[i - 1].hash);
    expect(await target.verify()).toEqual({ valid: true, length: 50, brokenAt: null });
  });

  it("verifies as valid while appends are running", async () => {
    const target = chain();
    await appendMany(target, 5);
    const appends = Promise.all(Array.from({ length: 30 }, (_, n) => target.append({ action: "a", n })));
    const checks = await Promise.all(Array.from({ length: 5 }, () => target.verify()));
    await appends;
    for (const check of checks) expect(check).toMatchObject({ valid: true, brokenAt: null });
    expect(await target.verify()).toEqual({ valid: true, length: 35, brokenAt: null });
  });

  it("keeps several chains in one scope independent", async () => {
    await appendMany(chain("realm-a"), 3);
    const other = await chain("realm-b").append({ action: "x" });
    expect(other.seq).toBe(1);
    expect(await chain("realm-a").verify()).toMatchObject({ valid: true, length: 3 });
    expect(await chain("realm-b").verify()).toMatchObject({ valid: true, length: 1 });
  });

  it("never lets timestamps go backwards along the chain, even when the clock does", async () => {
    const target = chain();
    setClock({ now: () => Date.parse("2030-01-01T00:00:10.000Z") });
    await target.append({ action: "late" });
    setClock({ now: () => Date.parse("2030-01-01T00:00:05.000Z") });
    const next = await target.append({ action: "clock went back" });
    expect(next.timestamp).toBe("2030-01-01T00:00:10.000Z");
  });

  it("refuses reserved field names and chain ids containing a colon", async () => {
    await expect(chain().append({ action: "x", hash: "forged" } as Fields)).rejects.toThrow(/reserved/);
    expect(() => chain("a:b")).toThrow(/must not contain ":"/);
  });
});

describe("hash chain crash recovery", () => {
  it("heals an entry written whose head was never advanced, then appends after it", async () => {
    const target = chain();
    await appendMany(target, 2);
    const head = await target.head();
    // What a process that crashed between its two writes leaves behind.
    const body = {
      action: "orphan",
      seq: 3,
      id: newId(),
      timestamp: new Date().toISOString(),
      prevHash: head.hash,
    };
    const orphan = { ...body, hash: entryHash(body) };
    await state.set(SCOPE, target.entryKey(3), orphan, 0);
    expect(await target.verify()).toMatchObject({ valid: true, length: 3 });

    const next = await target.append({ action: "after crash" });
    expect(next.seq).toBe(4);
    expect(next.prevHash).toBe(orphan.hash);
    expect((await target.head()).seq).toBe(4);
    expect(await target.verify()).toEqual({ valid: true, length: 4, brokenAt: null });
  });

  it("re-derives a deleted head from the entries on the next append", async () => {
    const target = chain();
    await appendMany(target, 3);
    await state.delete(HEADS, "realm-a");
    const next = await target.append({ action: "after head loss" });
    expect(next.seq).toBe(4);
    expect(await target.verify()).toEqual({ valid: true, length: 4, brokenAt: null });
  });

  it("refuses to append after a slot that does not link to the head, naming the chain", async () => {
    const target = chain();
    await appendMany(target, 2);
    const body = {
      action: "forged",
      seq: 3,
      id: newId(),
      timestamp: new Date().toISOString(),
      prevHash: GENESIS_HASH,
    };
    await state.set(SCOPE, target.entryKey(3), { ...body, hash: entryHash(body) });
    await expect(target.append({ action: "x" })).rejects.toThrow(/chain_entries\/realm-a is inconsistent/);
  });
});

describe("hash chain verify", () => {
  it("reports an empty chain as valid", async () => {
    expect(await chain().verify()).toEqual({ valid: true, length: 0, brokenAt: null });
  });

  it("detects an edited entry", async () => {
    const target = chain();
    await appendMany(target, 5);
    const key = target.entryKey(3);
    await state.set(SCOPE, key, { ...(await state.get<ChainEntry<Fields>>(SCOPE, key)), action: "edited" });
    expect(await target.verify()).toMatchObject({
      valid: false,
      length: 5,
      brokenAt: 3,
      reason: expect.stringMatching(/modified/),
    });
  });

  /** Edits entry `index` and recomputes its own hash, as a careful forger would. */
  async function forge(target: ReturnType<typeof chain>, index: number): Promise<void> {
    const key = target.entryKey(index);
    const edited = {
      ...(await state.get<ChainEntry<Fields>>(SCOPE, key)),
      action: "edited",
    } as ChainEntry<Fields>;
    await state.set(SCOPE, key, { ...edited, hash: entryHash(edited) });
  }

  it("detects an edited entry whose hash was recomputed, at the next link", async () => {
    const target = chain();
    await appendMany(target, 5);
    await forge(target, 3);
    expect(await target.verify()).toMatchObject({ valid: false, brokenAt: 4 });
  });

  it("detects a deleted middle entry", async () => {
    const target = chain();
    await appendMany(target, 5);
    await state.delete(SCOPE, target.entryKey(3));
    expect(await target.verify()).toMatchObject({
      valid: false,
      length: 4,
      brokenAt: 3,
      reason: "entry 3 is missing",
    });
  });

  it("detects a deleted tail entry through the stored head", async () => {
    const target = chain();
    await appendMany(target, 5);
    await state.delete(SCOPE, target.entryKey(5));
    expect(await target.verify()).toMatchObject({ valid: false, length: 4, brokenAt: 5 });
  });

  it("detects swapped entries", async () => {
    const target = chain();
    await appendMany(target, 5);
    const [third, fourth] = [
      await state.get(SCOPE, target.entryKey(3)),
      await state.get(SCOPE, target.entryKey(4)),
    ];
    await state.set(SCOPE, target.entryKey(3), fourth);
    await state.set(SCOPE, target.entryKey(4), third);
    expect(await target.verify()).toMatchObject({
      valid: false,
      brokenAt: 3,
      reason: expect.stringMatching(/reordered/),
    });
  });

  it("detects a last entry rewritten with a recomputed hash, because the head no longer matches", async () => {
    const target = chain();
    await appendMany(target, 3);
    await forge(target, 3);
    expect(await target.verify()).toMatchObject({
      valid: false,
      brokenAt: 3,
      reason: expect.stringMatching(/head/),
    });
  });

  it("detects a head that was deleted while several entries exist", async () => {
    const target = chain();
    await appendMany(target, 4);
    await state.delete(HEADS, "realm-a");
    expect(await target.verify()).toMatchObject({ valid: false, brokenAt: 2 });
  });
});

describe("hash chain read", () => {
  it("pages newest first across storage blocks with a cursor", async () => {
    const target = chain();
    await appendMany(target, 230);
    const seqs: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await target.read({ limit: 37, cursor });
      seqs.push(...page.entries.map((entry) => entry.seq));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seqs).toEqual(Array.from({ length: 230 }, (_, n) => 230 - n));
  });

  it("pages oldest first with a filter", async () => {
    const target = chain();
    await appendMany(target, 120);
    const first = await target.read({ order: "asc", limit: 10, filter: (entry) => (entry.n ?? 0) % 3 === 0 });
    expect(first.entries.map((entry) => entry.n)).toEqual([3, 6, 9, 12, 15, 18, 21, 24, 27, 30]);
    const second = await target.read({ order: "asc", limit: 10, cursor: first.nextCursor ?? undefined });
    expect(second.entries[0].n).toBe(31);
  });

  it("bounds the work of a rare filter and returns a cursor to continue", async () => {
    const target = chain();
    await target.append({ action: "rare" });
    await appendMany(target, 250);
    const rare = (entry: ChainEntry<Fields>) => entry.action === "rare";
    const first = await target.read({ filter: rare, maxScan: 100 });
    expect(first.entries).toEqual([]);
    expect(first.nextCursor).not.toBeNull();
    let page = first;
    while (page.nextCursor !== null && page.entries.length === 0) {
      page = await target.read({ filter: rare, maxScan: 100, cursor: page.nextCursor });
    }
    expect(page.entries.map((entry) => entry.seq)).toEqual([1]);
  });

  it("filters by time and stops at the first entry past the range", async () => {
    const target = chain();
    for (let second = 0; second < 10; second++) {
      setClock({ now: () => Date.parse(`2030-01-01T00:00:0${second}.000Z`) });
      await target.append({ action: "tick", n: second });
    }
    const page = await target.read({ since: "2030-01-01T00:00:03.000Z", until: "2030-01-01T00:00:05.000Z" });
    expect(page.entries.map((entry) => entry.n)).toEqual([5, 4, 3]);
    expect(page.nextCursor).toBeNull();
  });

  it("rejects a cursor it did not produce", async () => {
    await expect(chain().read({ cursor: "abc" })).rejects.toThrow(/cursor/);
  });
});
