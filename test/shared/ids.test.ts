import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock.ts";
import { newId } from "../../src/shared/ids.ts";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

afterEach(() => setClock(null));

describe("newId", () => {
  it("makes version 7 uuids, with the prefix when one is given", () => {
    expect(newId()).toMatch(V7);
    expect(newId("session")).toMatch(new RegExp(`^session-${V7.source.slice(1)}`));
  });

  it("makes ids that sort by the millisecond they were made in, and never the same id twice", () => {
    let now = Date.UTC(2026, 10, 26);
    setClock({ now: () => now });
    const ids: string[] = [];
    for (let ms = 0; ms < 50; ms++, now += 1) for (let i = 0; i < 200; i++) ids.push(newId());
    expect(new Set(ids).size).toBe(ids.length);
    const millis = (id: string) => Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16);
    const sorted = [...ids].sort();
    expect(sorted.map(millis)).toEqual(ids.map(millis));
    expect(millis(ids[0] as string)).toBe(Date.UTC(2026, 10, 26));
  });
});
