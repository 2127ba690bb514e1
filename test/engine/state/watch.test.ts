import { afterEach, describe, expect, it, vi } from "vitest";
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
