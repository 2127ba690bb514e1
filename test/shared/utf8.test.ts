import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8Head } from "../../src/shared/utf8.ts";

describe("a text's UTF-8 head", () => {
  it("is the longest prefix within the bytes, well formed, for any text", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 200 }),
        fc.integer({ min: 0, max: 400 }),
        (text, max) => {
          const head = utf8Head(text, max);
          expect(text.startsWith(head)).toBe(true);
          expect(Buffer.byteLength(head)).toBeLessThanOrEqual(max);
          expect(head.isWellFormed()).toBe(true);
          // One more character would not fit.
          const next = String.fromCodePoint(text.codePointAt(head.length) ?? 0);
          if (head.length < text.length) expect(Buffer.byteLength(head + next)).toBeGreaterThan(max);
        },
      ),
    );
  });

  it("cuts before an emoji that would not fit whole", () => {
    expect(utf8Head(`ab😀`, 5)).toBe("ab");
    expect(utf8Head("日本語", 7)).toBe("日本");
  });
});
