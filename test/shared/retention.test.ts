import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock.ts";
import { newId } from "../../src/shared/ids.ts";
import {
  DAY_MS,
  endedBefore,
  idTime,
  mayBeOlderThan,
  RETENTION_CHUNK,
  retentionCutoff,
  singleFlight,
} from "../../src/shared/retention.ts";
import { stateEachTest } from "../helpers/engine.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const at = (days: number) => T0 + days * DAY_MS;

afterEach(() => setClock(null));

describe("retention rules", () => {
  it("is off at 0 days, else the cutoff is that many days back", () => {
    expect(retentionCutoff(0, at(40))).toBeNull();
    expect(retentionCutoff(30, at(40))).toBe(at(10));
  });

  it("counts an end time before the cutoff only, never a missing or unreadable one", () => {
    expect(endedBefore(new Date(at(9)).toISOString(), at(10))).toBe(true);
    expect(endedBefore(at(9), at(10))).toBe(true);
    expect(endedBefore(at(10), at(10))).toBe(false);
    for (const missing of [undefined, null, "", "not a time", Number.NaN])
      expect(endedBefore(missing, at(10))).toBe(false);
  });

  it("reads the creation time of time-ordered ids only", () => {
    setClock({ now: () => at(3) });
    expect(idTime(newId("run"))).toBe(at(3));
    expect(idTime("run-f0000000-0000-4000-8000-000000000000")).toBeUndefined();
    expect(idTime("whatever")).toBeUndefined();
  });

  it("runs one sweep at a time, a second call sharing the first's result", async () => {
    let calls = 0;
    let finish: (value: number) => void = () => undefined;
    const run = singleFlight(() => {
      calls++;
      return new Promise<number>((resolve) => {
        finish = resolve;
      });
    });
    const first = run();
    const second = run();
    finish(7);
    expect([await first, await second, calls]).toEqual([7, 7, 1]);
    const third = run();
    finish(8);
    expect([await third, calls]).toEqual([8, 2]);
  });
});

describe("mayBeOlderThan", () => {
  const state = stateEachTest();

  it("reads the ids made before the cutoff and the others' forms, never the retained window's time-ordered ids", async () => {
    const made: Record<"old" | "recent", string[]> = { old: [], recent: [] };
    for (let index = 0; index < 1300; index++) {
      const day = index < 100 ? 1 + index / 1000 : 20 + index / 1000;
      setClock({ now: () => at(day) });
      const id = newId("rec");
      made[day < 10 ? "old" : "recent"].push(id);
      await state.set("retention_test", id, { id });
    }
    // Random (v4) ids sort before, inside and after the time-ordered ones.
    const legacy = ["rec-00000000-0000-4000-8000-000000000000", "rec-f0000000-0000-4000-8000-000000000000"];
    for (const id of legacy) await state.set("retention_test", id, { id });
    setClock({ now: () => at(40) });
    let read = 0;
    const counted = new Proxy(state, {
      get: (target, property) =>
        property === "list"
          ? async (...args: Parameters<typeof state.list>) => {
              const page = await state.list(...args);
              read += page.items.length;
              return page;
            }
          : Reflect.get(target, property),
    });
    const seen: string[] = [];
    for await (const record of mayBeOlderThan(counted, "retention_test", "rec", at(10), at(40)))
      seen.push(record.key);
    expect(seen.sort()).toEqual([...made.old, ...legacy].sort());
    // One chunk reaches the window; the next read starts past it (a full read: 1302 records).
    expect(read).toBe(RETENTION_CHUNK + 1);
  });
});
