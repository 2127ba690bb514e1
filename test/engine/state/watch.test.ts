import { afterEach, describe, expect, it, vi } from "vitest";
import { Engine } from "../../../src/engine/engine.ts";
import { registerStateFunctions } from "../../../src/engine/state/functions.ts";
import { SqliteStateStore } from "../../../src/engine/state/sqlite.ts";
import { RecentReads, wroteScope } from "../../../src/engine/state/watch.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("RecentReads", () => {
  it("answers a record again until its scope is written in this process; other scopes do not matter", async () => {
    const recent = new RecentReads<object, number>(1000);
    const reader = {};
    let loads = 0;
    const load = async () => ++loads;
    expect(await recent.read(reader, "watch-a", "k", load)).toBe(1);
    expect(await recent.read(reader, "watch-a", "k", load)).toBe(1);
    wroteScope("watch-b");
    expect(await recent.read(reader, "watch-a", "k", load)).toBe(1);
    wroteScope("watch-a");
    expect(await recent.read(reader, "watch-a", "k", load)).toBe(2);
  });

  it("keeps keys and readers apart", async () => {
    const recent = new RecentReads<object, string>(1000);
    const [first, second] = [{}, {}];
    expect(await recent.read(first, "watch-c", "x", async () => "first x")).toBe("first x");
    expect(await recent.read(first, "watch-c", "y", async () => "first y")).toBe("first y");
    expect(await recent.read(second, "watch-c", "x", async () => "second x")).toBe("second x");
    expect(await recent.read(first, "watch-c", "x", async () => "again")).toBe("first x");
  });

  it("reads again once its time is up (writes of other processes arrive within it)", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const recent = new RecentReads<object, number>(1000);
    const reader = {};
    let loads = 0;
    const load = async () => ++loads;
    await recent.read(reader, "watch-d", "k", load);
    vi.advanceTimersByTime(999);
    expect(await recent.read(reader, "watch-d", "k", load)).toBe(1);
    vi.advanceTimersByTime(2);
    expect(await recent.read(reader, "watch-d", "k", load)).toBe(2);
  });

  it("does not keep a failed read", async () => {
    const recent = new RecentReads<object, number>(1000);
    const reader = {};
    await expect(
      recent.read(reader, "watch-e", "k", async () => Promise.reject(new Error("down"))),
    ).rejects.toThrow("down");
    expect(await recent.read(reader, "watch-e", "k", async () => 7)).toBe(7);
  });
});

describe("the state functions' writes, as RecentReads sees them", () => {
  it("count a delete only when it deleted something, so an absence guard keeps a kept record", async () => {
    const engine = new Engine();
    registerStateFunctions(engine, new SqliteStateStore(":memory:"));
    const recent = new RecentReads<object, number>(60_000);
    const reader = {};
    let loads = 0;
    const load = async () => ++loads;
    await recent.read(reader, "watch-guard", "budget", load);
    const guard = { type: "delete", scope: "watch-guard", key: "budget", expectedVersion: 0 } as const;
    await engine.trigger({ function_id: "state::batch", payload: { ops: [guard] } });
    await engine.trigger({ function_id: "state::delete", payload: { scope: "watch-guard", key: "none" } });
    expect(await recent.read(reader, "watch-guard", "budget", load)).toBe(1);
    await engine.trigger({
      function_id: "state::set",
      payload: { scope: "watch-guard", key: "budget", value: 1 },
    });
    expect(await recent.read(reader, "watch-guard", "budget", load)).toBe(2);
    await engine.trigger({
      function_id: "state::batch",
      payload: { ops: [{ type: "delete", scope: "watch-guard", key: "budget" }] },
    });
    expect(await recent.read(reader, "watch-guard", "budget", load)).toBe(3);
  });
});
