import { afterAll, describe, expect, it } from "vitest";
import {
  claimScan,
  clearDirty,
  dirtyAgents,
  markDirty,
  readMark,
  releaseScan,
} from "../../../src/workers/memory/embedding-marks.ts";
import { createStateEngine } from "../../helpers/engine.ts";

const { state, close } = createStateEngine();
afterAll(close);

describe("the embedding queue's durable marks", () => {
  it("says when a model is new, and clears only if no store marked the agent since", async () => {
    expect((await markDirty(state, "a1", "openai/small")).newModel).toBe(true);
    const { mark, newModel } = await markDirty(state, "a1", "openai/small");
    expect(newModel).toBe(false);
    expect(mark).toMatchObject({ dirty: true, seq: 2, model: "openai/small" });
    await markDirty(state, "a1", "openai/small");
    expect(await clearDirty(state, "a1", "openai/small", 2)).toBe(false);
    expect(await clearDirty(state, "a1", "openai/large", 3)).toBe(false);
    expect(await clearDirty(state, "a1", "openai/small", 3)).toBe(true);
    expect(await readMark(state, "a1")).toMatchObject({ dirty: false, seq: 3 });
    expect((await markDirty(state, "a1", "openai/large")).newModel).toBe(true);
  });

  it("leases a pass to one node at a time, until it runs out or is released", async () => {
    await markDirty(state, "a2", "m");
    expect(await claimScan(state, "a2", "node-a", 1000, 60_000)).toEqual({ ok: true, until: 61_000 });
    expect(await claimScan(state, "a2", "node-b", 2000, 60_000)).toEqual({ ok: false, until: 61_000 });
    expect((await claimScan(state, "a2", "node-a", 3000, 60_000)).ok).toBe(true);
    expect((await claimScan(state, "a2", "node-b", 63_001, 60_000)).ok).toBe(true);
    await releaseScan(state, "a2", "node-a");
    expect((await readMark(state, "a2"))?.scanner).toBe("node-b");
    await releaseScan(state, "a2", "node-b");
    expect((await claimScan(state, "a2", "node-a", 63_002, 60_000)).ok).toBe(true);
  });

  it("lists dirty agents, and for the sweep only those left alone for a while", async () => {
    await markDirty(state, "a3", "m");
    const now = Date.now();
    const all = await dirtyAgents(state);
    expect(all).toEqual(expect.arrayContaining(["a1", "a2", "a3"]));
    expect(await dirtyAgents(state, { ms: 60_000, now })).toEqual([]);
    // a2's pass is leased (until 123 002 ms after the epoch: long over by `now`); later, all are quiet.
    expect(await dirtyAgents(state, { ms: 60_000, now: now + 120_000 })).toEqual(
      expect.arrayContaining(["a1", "a2", "a3"]),
    );
  });
});
