import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  duration,
  parseJson,
  parseRelations,
  percent,
  preview,
} from "../../../src/console/web/lib/format.ts";

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

  it("reads relations typed as type: target pairs, whatever the spacing, and gives back what was written", () => {
    expect(parseRelations("worked_on: Analytical Engine; knows:Babbage\n")).toEqual([
      { type: "worked_on", target: "Analytical Engine" },
      { type: "knows", target: "Babbage" },
    ]);
    expect(parseRelations("  ")).toEqual([]);
    const word = fc
      .string({ minLength: 1, maxLength: 12 })
      .filter((text) => /^[^:;\n]+$/.test(text) && text.trim() === text);
    fc.assert(
      fc.property(fc.array(fc.record({ type: word, target: word }), { maxLength: 6 }), (relations) => {
        const written = relations.map((relation) => `${relation.type}: ${relation.target}`).join("; ");
        expect(parseRelations(written)).toEqual(relations);
      }),
    );
  });

  it("refuses a relation without a type or a target, naming it", () => {
    expect(() => parseRelations("knows Babbage")).toThrow('"knows Babbage" is not a relation');
    expect(() => parseRelations(": Babbage")).toThrow("not a relation");
    expect(() => parseRelations("knows:")).toThrow("not a relation");
  });

  it("names the field whose text is not JSON", () => {
    expect(parseJson('{"a": 1}', "Properties")).toEqual({ a: 1 });
    expect(() => parseJson("{a:", "Properties")).toThrow(/^Properties is not JSON/);
  });
});
