import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/shared/canonical-json.ts";

/** The same value with every object's keys inserted in another order (a permutation driven by `seed`). */
function reordered(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item, index) => reordered(item, seed + index));
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value);
  const shuffled: Array<[string, unknown]> = [];
  let state = seed;
  while (entries.length > 0) {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    shuffled.push(entries.splice(state % entries.length, 1)[0]);
  }
  const copy: Record<string, unknown> = {};
  for (const [key, item] of shuffled) {
    Object.defineProperty(copy, key, {
      value: reordered(item, state),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

/** The same value with undefined members sprinkled into its objects. */
function withUndefinedMembers(value: unknown, names: string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => withUndefinedMembers(item, names));
  if (value === null || typeof value !== "object") return value;
  const copy: Record<string, unknown> = {};
  for (const name of names) copy[`${name}?`] = undefined;
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(copy, key, {
      value: withUndefinedMembers(item, names),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

const json = fc.jsonValue({ maxDepth: 4 });

describe("canonicalJson (properties)", () => {
  it("does not depend on the order in which keys were inserted", () => {
    fc.assert(
      fc.property(json, fc.nat(), (value, seed) => {
        expect(canonicalJson(reordered(value, seed))).toBe(canonicalJson(value));
      }),
    );
  });

  it("parses back to the value JSON itself round-trips to", () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it("is exactly as long as JSON.stringify: no whitespace, same members, only the order differs", () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalJson(value).length).toBe(JSON.stringify(value).length);
      }),
    );
  });

  it("drops undefined members", () => {
    fc.assert(
      fc.property(
        json,
        fc.array(fc.string({ maxLength: 3 }), { minLength: 1, maxLength: 3 }),
        (value, names) => {
          expect(canonicalJson(withUndefinedMembers(value, names))).toBe(canonicalJson(value));
        },
      ),
    );
  });

  it("sorts the keys of an object by code unit", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: "binary", maxLength: 4 }), fc.integer()), (record) => {
        const keys = Object.keys(record).sort();
        const expected = `{${keys.map((key) => `${JSON.stringify(key)}:${record[key]}`).join(",")}}`;
        expect(canonicalJson(record)).toBe(expected);
      }),
    );
  });
});

describe("canonicalJson (examples)", () => {
  it("sorts nested keys, integer-like keys included, and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1], c: null }, 10: "x", 9: "y" })).toBe(
      '{"10":"x","9":"y","a":{"c":null,"d":[3,1]},"b":1}',
    );
  });

  it("writes undefined as null at the top level and in arrays, like JSON", () => {
    expect(canonicalJson(undefined)).toBe("null");
    expect(canonicalJson([1, undefined, 2])).toBe("[1,null,2]");
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });

  it("honours toJSON, so a Date hashes as its ISO string, the form it is stored in", () => {
    const at = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 6));
    expect(canonicalJson({ at, list: [at] })).toBe(
      '{"at":"2025-01-02T03:04:05.006Z","list":["2025-01-02T03:04:05.006Z"]}',
    );
    expect(canonicalJson({ at })).toBe(canonicalJson(JSON.parse(JSON.stringify({ at }))));
    expect(canonicalJson({ a: new Date(0) })).not.toBe(canonicalJson({ a: new Date(1) }));
  });

  it("drops function members and writes them as null in arrays, like JSON", () => {
    expect(canonicalJson({ f: () => 1, a: 1 })).toBe('{"a":1}');
    expect(canonicalJson([() => 1])).toBe("[null]");
  });

  it("escapes keys and strings the way JSON does", () => {
    expect(canonicalJson({ 'q"uote': "line\nbreak", "\u00e9": "\u2028" })).toBe(
      JSON.stringify({ 'q"uote': "line\nbreak", "\u00e9": "\u2028" }),
    );
  });
});
