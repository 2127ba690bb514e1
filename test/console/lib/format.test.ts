import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { duration, percent, preview } from "../../../src/console/web/lib/format.ts";

describe("console formatting", () => {
  it("writes durations as people read them", () => {
    expect(duration(850)).toBe("850 ms");
    expect(duration(1234)).toBe("1.2 s");
    expect(duration(42_000)).toBe("42 s");
    expect(duration(185_000)).toBe("3 min 5 s");
    expect(duration(120_000)).toBe("2 min");
    expect(duration(-1)).toBe("—");
  });

  it("keeps a bar's percent within 0 and 100 for any numbers", () => {
    fc.assert(
      fc.property(fc.double(), fc.double(), (part, whole) => {
        const value = percent(part, whole);
        expect(value >= 0 && value <= 100).toBe(true);
      }),
    );
    expect(percent(25, 100)).toBe(25);
    expect(percent(250, 100)).toBe(100);
    expect(percent(5, 0)).toBe(0);
  });

  it("cuts long values and shows non-text as JSON", () => {
    expect(preview({ a: 1 })).toBe('{"a":1}');
    expect(preview("x".repeat(10), 5)).toBe("xxxx…");
    expect(preview(undefined)).toBe("");
  });
});
