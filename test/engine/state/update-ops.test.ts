import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyUpdateOps, type UpdateOp, updateOpSchema } from "../../../src/engine/state/update-ops.ts";

const FORBIDDEN = ["__proto__", "constructor", "prototype"];

/** Segments that collide often, the forbidden ones, Object.prototype names, and random text. */
const segment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("a", "b", "n", "list", "text") },
  { weight: 1, arbitrary: fc.constantFrom(...FORBIDDEN, "toString", "hasOwnProperty", "valueOf", "") },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
);
const path = fc.oneof(segment, fc.array(segment, { maxLength: 4 }));
const json = fc.jsonValue({ maxDepth: 3 });
const jsonObject = fc.dictionary(segment, json, { maxKeys: 4 });
const number = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Raw ops as a caller would send them; only those the schema accepts are used, in their parsed form. */
const rawOp = fc.oneof(
  fc.record({ type: fc.constant("set"), path, value: json }),
  fc.record({ type: fc.constant("merge"), path, value: jsonObject }, { requiredKeys: ["type", "value"] }),
  fc.record(
    { type: fc.constantFrom("increment", "decrement"), path, by: number },
    { requiredKeys: ["type", "path"] },
  ),
  fc.record({ type: fc.constant("append"), path, value: json }, { requiredKeys: ["type", "value"] }),
  fc.record({ type: fc.constant("remove"), path }),
);
const op = rawOp
  .map((raw) => updateOpSchema.safeParse(raw))
  .filter((parsed) => parsed.success)
  .map((parsed) => parsed.data as UpdateOp);
const ops = fc.array(op, { maxLength: 8 });

/** Stored values: missing, any JSON, and (most often) objects whose keys the ops are likely to hit. */
const start = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: json },
  { weight: 3, arbitrary: fc.dictionary(segment, fc.oneof(json, jsonObject), { maxKeys: 5 }) },
);

function prototypeSnapshot(): Record<string, string[]> {
  return {
    object: Object.getOwnPropertyNames(Object.prototype).sort(),
    array: Object.getOwnPropertyNames(Array.prototype).sort(),
    function: Object.getOwnPropertyNames(Function.prototype).sort(),
  };
}

/** Every object in a tree keeps an ordinary prototype: nothing was swapped in through `__proto__`. */
function prototypesAreOrdinary(value: unknown): boolean {
  if (value === null || typeof value !== "object") return true;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) return false;
  return Object.values(value).every(prototypesAreOrdinary);
}

describe("applyUpdateOps (properties)", () => {
  it("never mutates the stored value or the ops", () => {
    fc.assert(
      fc.property(start, ops, (value, list) => {
        const before = structuredClone({ value, list });
        applyUpdateOps(value, list);
        expect({ value, list }).toEqual(before);
      }),
    );
  });

  it("never throws for ops the schema accepts, and reports each failure with its index", () => {
    fc.assert(
      fc.property(start, ops, (value, list) => {
        const { errors } = applyUpdateOps(value, list);
        for (const error of errors) {
          expect(error.op_index).toBeGreaterThanOrEqual(0);
          expect(error.op_index).toBeLessThan(list.length);
          expect(error.code).toMatch(/^(set|merge|increment|decrement|append|remove)\./);
          expect(error.code.startsWith(`${list[error.op_index].type}.`)).toBe(true);
          expect(typeof error.message).toBe("string");
        }
        expect(new Set(errors.map((e) => e.op_index)).size).toBe(errors.length);
      }),
    );
  });

  it("a failing op leaves the value as it was before that op, and the others still apply", () => {
    fc.assert(
      fc.property(start, ops, (value, list) => {
        let current: unknown = value === undefined ? {} : value;
        const failed: number[] = [];
        list.forEach((one, index) => {
          const step = applyUpdateOps(current, [one]);
          if (step.errors.length > 0) {
            failed.push(index);
            expect(step.value).toEqual(current);
          }
          current = step.value;
        });
        const all = applyUpdateOps(value, list);
        expect(all.value).toEqual(current);
        expect(all.errors.map((e) => e.op_index)).toEqual(failed);
      }),
    );
  });

  it("increments and decrements sum exactly, starting from a missing counter or a number", () => {
    const counterPath = fc.constantFrom<string | string[]>("n", ["n"], ["stats", "daily", "n"]);
    const delta = fc.record(
      {
        type: fc.constantFrom("increment" as const, "decrement" as const),
        by: fc.integer({ min: -1e9, max: 1e9 }),
      },
      { requiredKeys: ["type"] },
    );
    fc.assert(
      fc.property(
        counterPath,
        fc.option(fc.integer({ min: -1e9, max: 1e9 })),
        fc.array(delta, { minLength: 1 }),
        (p, initial, deltas) => {
          const segments = typeof p === "string" ? [p] : p;
          let stored: Record<string, unknown> | undefined;
          if (initial !== null) {
            stored = {};
            let node = stored;
            for (const s of segments.slice(0, -1)) {
              const child: Record<string, unknown> = {};
              node[s] = child;
              node = child;
            }
            node[segments[segments.length - 1]] = initial;
          }
          const list = deltas.map((d) => updateOpSchema.parse({ ...d, path: p }));
          const { value, errors } = applyUpdateOps(stored, list);
          expect(errors).toEqual([]);
          const expected = deltas.reduce(
            (sum, d) => sum + (d.type === "increment" ? 1 : -1) * (d.by ?? 1),
            initial ?? 0,
          );
          let node: unknown = value;
          for (const s of segments) node = (node as Record<string, unknown>)[s];
          expect(node).toBe(expected);
        },
      ),
    );
  });

  it("a counter never leaves the finite number range: an overflowing step fails and keeps the old value", () => {
    const huge = fc.double({ min: -Number.MAX_VALUE, max: Number.MAX_VALUE, noNaN: true });
    fc.assert(
      fc.property(fc.array(huge, { minLength: 1, maxLength: 6 }), (steps) => {
        let counter = 0;
        for (const by of steps) {
          const { value, errors } = applyUpdateOps({ n: counter }, [
            updateOpSchema.parse({ type: "increment", path: "n", by }),
          ]);
          const next = (value as { n: number }).n;
          expect(Number.isFinite(next)).toBe(true);
          if (Number.isFinite(counter + by)) {
            expect(errors).toEqual([]);
            expect(next).toBe(counter + by);
          } else {
            expect(errors.map((e) => e.code)).toEqual(["increment.overflow"]);
            expect(next).toBe(counter);
          }
          counter = next;
        }
      }),
    );
  });

  it("forbidden segments are refused wherever they appear and never pollute a prototype", () => {
    const forbiddenPath = fc
      .tuple(
        fc.array(segment, { maxLength: 3 }),
        fc.constantFrom(...FORBIDDEN),
        fc.array(segment, { maxLength: 3 }),
      )
      .map(([before, bad, after]) => [...before, bad, ...after]);
    const attack = fc.oneof(
      fc.record({
        type: fc.constant("set" as const),
        path: forbiddenPath,
        value: fc.constant({ polluted: "yes" }),
      }),
      fc.record({
        type: fc.constant("merge" as const),
        path: forbiddenPath,
        value: fc.constant({ polluted: "yes" }),
      }),
      fc.record({ type: fc.constant("increment" as const), path: forbiddenPath, by: fc.constant(1) }),
      fc.record({
        type: fc.constant("append" as const),
        path: forbiddenPath,
        value: fc.constant("polluted"),
      }),
      fc.record({ type: fc.constant("remove" as const), path: forbiddenPath }),
      fc.record({ type: fc.constant("set" as const), path: fc.constantFrom(...FORBIDDEN), value: json }),
    );
    const before = prototypeSnapshot();
    fc.assert(
      fc.property(
        start,
        ops,
        fc.array(attack, { minLength: 1, maxLength: 3 }),
        fc.nat(),
        (value, list, attacks, at) => {
          const parsedAttacks = attacks.map((a) => updateOpSchema.parse(a));
          const position = at % (list.length + 1);
          const mixed = [...list.slice(0, position), ...parsedAttacks, ...list.slice(position)];
          const { value: result, errors } = applyUpdateOps(value, mixed);
          const failed = new Map(errors.map((e) => [e.op_index, e.code]));
          parsedAttacks.forEach((a, i) => {
            expect(failed.get(position + i)).toBe(`${a.type}.path.invalid`);
          });
          expect(prototypesAreOrdinary(result)).toBe(true);
          expect(({} as Record<string, unknown>).polluted).toBeUndefined();
          expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
          expect(prototypeSnapshot()).toEqual(before);
        },
      ),
    );
  });
});

describe("applyUpdateOps (examples)", () => {
  const apply = (value: unknown, ...raw: unknown[]) =>
    applyUpdateOps(
      value,
      raw.map((r) => updateOpSchema.parse(r)),
    );

  it("starts from {} when the key is missing", () => {
    expect(apply(undefined, { type: "set", path: "a", value: 1 })).toEqual({ value: { a: 1 }, errors: [] });
  });

  it("set with an empty path replaces the root", () => {
    expect(apply({ a: 1 }, { type: "set", path: "", value: 5 }).value).toBe(5);
  });

  it("merge is shallow and creates intermediate objects on a nested path", () => {
    expect(
      apply({ a: { x: 1, y: { z: 1 } } }, { type: "merge", path: "a", value: { y: { w: 2 } } }).value,
    ).toEqual({
      a: { x: 1, y: { w: 2 } },
    });
    expect(apply({}, { type: "merge", path: ["p", "q"], value: { k: 1 } }).value).toEqual({
      p: { q: { k: 1 } },
    });
  });

  it("append pushes onto arrays, concatenates strings, and turns a missing leaf into [value]", () => {
    expect(apply({ l: [1] }, { type: "append", path: "l", value: 2 }).value).toEqual({ l: [1, 2] });
    expect(apply({ s: "ab" }, { type: "append", path: "s", value: "c" }).value).toEqual({ s: "abc" });
    expect(apply({}, { type: "append", path: "l", value: { x: 1 } }).value).toEqual({ l: [{ x: 1 }] });
    expect(apply({ n: 1 }, { type: "append", path: "n", value: 2 }).errors[0].code).toBe(
      "append.type_mismatch",
    );
  });

  it("an increment of a non-number is reported while the other ops still apply", () => {
    const result = apply(
      { n: "x" },
      { type: "increment", path: "n", by: 1 },
      { type: "set", path: "done", value: true },
      { type: "increment", path: "m" },
    );
    expect(result.value).toEqual({ n: "x", done: true, m: 1 });
    expect(result.errors).toEqual([
      { op_index: 0, code: "increment.not_number", message: expect.any(String) },
    ]);
  });

  it("remove deletes a key, and removing under a missing parent is a no-op that creates nothing", () => {
    expect(apply({ a: { b: 1, c: 2 } }, { type: "remove", path: ["a", "b"] }).value).toEqual({ a: { c: 2 } });
    expect(apply({ x: 1 }, { type: "remove", path: ["a", "b", "c"] })).toEqual({
      value: { x: 1 },
      errors: [],
    });
    expect(apply({ a: null }, { type: "remove", path: ["a", "b"] })).toEqual({
      value: { a: null },
      errors: [],
    });
    expect(apply({ a: 5 }, { type: "remove", path: ["a", "b"] }).errors[0].code).toBe(
      "remove.target_not_object",
    );
  });

  it("ops that need a path refuse the root", () => {
    for (const type of ["increment", "decrement", "remove"]) {
      expect(apply({ a: 1 }, { type, path: "" }).errors[0].code).toBe(`${type}.path.invalid`);
    }
  });

  it("refuses segments longer than 256 bytes", () => {
    const long = "é".repeat(129); // 258 bytes
    expect(apply({}, { type: "set", path: [long], value: 1 }).errors[0].code).toBe("set.path.invalid");
  });
});
