import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, prefixUpperBound } from "../../../src/engine/state/keys.ts";

/** Code point order, as SQLite BINARY and PostgreSQL "C" compare: the order of the UTF-8 bytes. */
function compare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

const isSurrogate = (code: number) => code >= 0xd800 && code <= 0xdfff;

/**
 * Scalar values (never a lone surrogate), biased towards the edges where UTF-16 order and code point
 * order disagree or the encoding changes length, and towards a few letters so strings share prefixes.
 */
const codePoint = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      0x00,
      0x01,
      0x7f,
      0x80,
      0x7ff,
      0x800,
      0xd7ff,
      0xe000,
      0xfffe,
      0xffff,
      0x10000,
      0x1f600,
      0x10fffe,
      0x10ffff,
    ),
  },
  { weight: 3, arbitrary: fc.integer({ min: 0x61, max: 0x63 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 0x10ffff }).filter((code) => !isSurrogate(code)) },
);
const text = (constraints: { minLength?: number; maxLength?: number } = {}) =>
  fc.array(codePoint, { maxLength: 6, ...constraints }).map((points) => String.fromCodePoint(...points));

describe("prefixUpperBound", () => {
  it("every string that starts with the prefix lies in [prefix, bound) in code point order", () => {
    fc.assert(
      fc.property(text({ minLength: 1 }), text(), (prefix, rest) => {
        const s = prefix + rest;
        const bound = prefixUpperBound(prefix);
        expect(compare(prefix, s)).toBeLessThanOrEqual(0);
        if (bound !== null) expect(compare(s, bound)).toBeLessThan(0);
      }),
    );
  });

  it("no string at or above the bound starts with the prefix", () => {
    const candidate = (prefix: string) =>
      fc.oneof(
        text({ maxLength: 8 }),
        text().map((rest) => (prefixUpperBound(prefix) ?? "") + rest),
        text().map((rest) => prefix + rest),
        text({ minLength: 1 }).map((rest) => [...prefix].slice(0, -1).join("") + rest),
      );
    fc.assert(
      fc.property(
        text({ minLength: 1 }).chain((prefix) => fc.tuple(fc.constant(prefix), candidate(prefix))),
        ([prefix, s]) => {
          const bound = prefixUpperBound(prefix);
          if (bound !== null && compare(s, bound) >= 0) expect(s.startsWith(prefix)).toBe(false);
        },
      ),
    );
  });

  it("the bound is well-formed text above the prefix, and absent only for a prefix of U+10FFFF alone", () => {
    fc.assert(
      fc.property(text({ minLength: 1 }), (prefix) => {
        const bound = prefixUpperBound(prefix);
        const allMax = [...prefix].every((c) => c === "\u{10FFFF}");
        expect(bound === null).toBe(allMax);
        if (bound !== null) {
          expect(bound.isWellFormed()).toBe(true);
          expect(compare(prefix, bound)).toBeLessThan(0);
          expect(bound.startsWith(prefix)).toBe(false);
        }
      }),
    );
  });

  it("steps the last code point, skipping the surrogate block and carrying past U+10FFFF", () => {
    expect(prefixUpperBound("a")).toBe("b");
    expect(prefixUpperBound("user:")).toBe("user;");
    expect(prefixUpperBound("\uD7FF")).toBe("\uE000");
    expect(prefixUpperBound("\uFFFF")).toBe("\u{10000}");
    expect(prefixUpperBound("a\u{1F600}")).toBe("a\u{1F601}");
    expect(prefixUpperBound("a\u{10FFFF}\u{10FFFF}")).toBe("b");
    expect(prefixUpperBound("\u{10FFFF}")).toBeNull();
    expect(prefixUpperBound("")).toBeNull();
  });
});

describe("encodeCursor / decodeCursor", () => {
  it("round-trips every storable key through a base64url cursor", () => {
    fc.assert(
      fc.property(fc.oneof(text({ maxLength: 20 }), fc.string({ unit: "binary", maxLength: 24 })), (key) => {
        fc.pre(!key.includes("\u0000"));
        const cursor = encodeCursor(key);
        expect(cursor).toMatch(/^[A-Za-z0-9_-]*$/);
        expect(decodeCursor(cursor)).toBe(key);
      }),
    );
  });

  it("refuses a cursor naming a key with NUL, which no backend can hold", () => {
    expect(decodeCursor(encodeCursor("a\u0000b"))).toBeNull();
  });

  it("any string either decodes to the key it is the exact cursor of, or to null", () => {
    const base64urlChar = fc.constantFrom(
      ..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 12 }),
          fc.array(base64urlChar, { maxLength: 12 }).map((c) => c.join("")),
        ),
        (cursor) => {
          const key = decodeCursor(cursor);
          if (key !== null) expect(encodeCursor(key)).toBe(cursor);
        },
      ),
    );
  });

  it("garbage decodes to null: foreign characters, padding, non-canonical base64 and invalid UTF-8", () => {
    const valid = encodeCursor("user:42");
    for (const garbage of [
      `${valid}=`,
      `${valid}!`,
      `${valid}+/`,
      " ",
      "a b",
      "A",
      "AB",
      "%41",
      valid.replace(/.$/, "="),
    ]) {
      expect(decodeCursor(garbage), garbage).toBeNull();
    }
    const invalidUtf8 = fc.uint8Array({ minLength: 1, maxLength: 16 }).filter((bytes) => {
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(bytes);
        return false;
      } catch {
        return true;
      }
    });
    fc.assert(
      fc.property(invalidUtf8, (bytes) => {
        expect(decodeCursor(Buffer.from(bytes).toString("base64url"))).toBeNull();
      }),
    );
  });
});
