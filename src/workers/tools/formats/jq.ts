import { isDeepStrictEqual } from "node:util";
import { badRequest } from "../../../shared/errors.ts";
import { type Node, parseJq } from "./jq-parse.ts";
import { jsonWeight } from "./weight.ts";

/**
 * A jq subset: paths (`.a.b`, `."k"`, `.[0]`, `.[]`, `.[1:3]`, `?`), pipes, `,`, `//`, arithmetic,
 * comparisons, `and`/`or`, literals, array and object construction, and the common builtins (see
 * BUILTINS). Every expression yields a list of outputs, as in jq.
 */
export function jq(expression: string, input: unknown): unknown[] {
  const budget: Budget = { left: MAX_OUTPUTS, weight: MAX_TOTAL_WEIGHT, sizes: new WeakMap() };
  try {
    // Parsed inside: an expression nested thousands deep ("((((…") overflows the parser's stack too.
    const results = evaluate(parseJq(expression), input, budget);
    if (jsonWeight(results, MAX_RESULTS_WEIGHT, budget.sizes) > MAX_RESULTS_WEIGHT)
      throw badRequest(`expression's outputs weigh more than ${MAX_RESULTS_WEIGHT} bytes as JSON`);
    return results;
  } catch (error) {
    // A string past V8's limit, or nesting past the stack: the expression's fault, said as such.
    if (error instanceof RangeError) throw badRequest(`expression went past a limit: ${error.message}`);
    throw error;
  }
}

const MAX_OUTPUTS = 100_000;
/**
 * The most a value may weigh, about its size as JSON: `[.,.]` twenty-six times is one value whose
 * arrays share their elements, cheap to build and 2^26 times the input to write out (or to compare,
 * or to turn into a string), so each value made is weighed, shared parts once.
 */
const MAX_VALUE_WEIGHT = 10_000_000;

/**
 * The most the values builtins and operators make may weigh together, and all the outputs together:
 * each value is held under MAX_VALUE_WEIGHT, but `(.,.,.,.,.,.,.,.,.,.)` a few times over a large
 * string makes thousands of outputs sharing it, and `ascii_downcase` then copies each (the service ran
 * out of memory and died), or they are all the answer (gigabytes of JSON from one short expression).
 */
const MAX_TOTAL_WEIGHT = 200_000_000;
const MAX_RESULTS_WEIGHT = 50_000_000;

interface Budget {
  left: number;
  /** Weight still allowed to the values made (see MAX_TOTAL_WEIGHT). */
  weight: number;
  /** Weights of the arrays and objects already weighed, by identity. */
  sizes: WeakMap<object, number>;
}

const typeOf = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);
const truthy = (value: unknown) => value !== false && value !== null;

function evaluate(node: Node, input: unknown, budget: Budget): unknown[] {
  /** `made`: the values are a builtin's or an operator's, new copies (the rest pass values on or share them). */
  const out = (values: unknown[], made = false) => {
    budget.left -= values.length;
    if (budget.left < 0) throw badRequest(`expression produced more than ${MAX_OUTPUTS} values`);
    for (const value of values) {
      const weight = jsonWeight(value, MAX_VALUE_WEIGHT, budget.sizes);
      if (weight > MAX_VALUE_WEIGHT)
        throw badRequest(`expression built a value of more than ${MAX_VALUE_WEIGHT} bytes as JSON`);
      if (made) budget.weight -= weight;
      if (budget.weight < 0)
        throw badRequest(`expression built more than ${MAX_TOTAL_WEIGHT} bytes of values as JSON`);
    }
    return values;
  };
  const ev = (n: Node, value: unknown) => evaluate(n, value, budget);
  switch (node.t) {
    case "identity":
      return [input];
    case "literal":
      return [node.value];
    case "field":
      return out(
        ev(node.of, input).flatMap((base) =>
          ev(node.name, input).flatMap((name) => index(base, name, node.optional)),
        ),
      );
    case "iterate":
      return out(ev(node.of, input).flatMap((base) => iterate(base, node.optional)));
    case "slice":
      return ev(node.of, input).map((base) => {
        if (base === null) return null;
        if (!Array.isArray(base) && typeof base !== "string")
          throw badRequest(`cannot slice ${typeOf(base)}`);
        const from = node.from ? Number(ev(node.from, input)[0]) : undefined;
        const to = node.to ? Number(ev(node.to, input)[0]) : undefined;
        return base.slice(from, to);
      });
    case "pipe":
      return out(ev(node.left, input).flatMap((value) => ev(node.right, value)));
    case "comma":
      return out([...ev(node.left, input), ...ev(node.right, input)]);
    case "alt": {
      const left = ev(node.left, input).filter(truthy);
      return left.length > 0 ? left : ev(node.right, input);
    }
    case "and":
    case "or":
      return ev(node.left, input).flatMap((left) => {
        if (node.t === "and" && !truthy(left)) return [false];
        if (node.t === "or" && truthy(left)) return [true];
        return ev(node.right, input).map(truthy);
      });
    case "binary":
      return out(
        ev(node.right, input).flatMap((right) =>
          ev(node.left, input).map((left) => binary(node.op, left, right)),
        ),
        true,
      );
    case "neg":
      return ev(node.of, input).map((value) => {
        if (typeof value !== "number") throw badRequest(`cannot negate ${typeOf(value)}`);
        return -value;
      });
    case "array":
      return out([node.of ? ev(node.of, input) : []]);
    case "object": {
      let results: Array<Record<string, unknown>> = [{}];
      for (const entry of node.entries) {
        const keys = ev(entry.key, input);
        const values = ev(entry.value, input);
        results = results.flatMap((partial) =>
          keys.flatMap((key) => {
            if (typeof key !== "string") throw badRequest(`object keys must be strings, not ${typeOf(key)}`);
            return values.map((value) => ({ ...partial, [key]: value }));
          }),
        );
      }
      return out(results);
    }
    case "call":
      return out(
        call(node.name, node.args, input, (n, value) => ev(n, value)),
        true,
      );
  }
}

function index(base: unknown, name: unknown, optional?: boolean): unknown[] {
  if (base === null) return [null];
  if (typeof name === "string" && typeof base === "object" && !Array.isArray(base)) {
    return [Object.hasOwn(base as object, name) ? (base as Record<string, unknown>)[name] : null];
  }
  if (typeof name === "number" && Array.isArray(base)) return [base.at(Math.trunc(name)) ?? null];
  if (optional) return [];
  throw badRequest(`cannot index ${typeOf(base)} with ${typeOf(name)} ${JSON.stringify(name)}`);
}

function iterate(base: unknown, optional?: boolean): unknown[] {
  if (Array.isArray(base)) return base;
  if (base !== null && typeof base === "object") return Object.values(base);
  if (optional) return [];
  throw badRequest(`cannot iterate over ${typeOf(base)}`);
}

function compareValues(a: unknown, b: unknown): number {
  const order = ["null", "boolean", "number", "string", "array", "object"];
  const ta = order.indexOf(typeOf(a));
  const tb = order.indexOf(typeOf(b));
  if (ta !== tb) return ta - tb;
  if (typeof a === "number" || typeof a === "boolean") return Number(a) - Number(b);
  if (typeof a === "string") return a < (b as string) ? -1 : a > (b as string) ? 1 : 0;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let k = 0; k < Math.min(a.length, b.length); k++) {
      const order = compareValues(a[k], b[k]);
      if (order !== 0) return order;
    }
    return a.length - b.length;
  }
  return JSON.stringify(a).localeCompare(JSON.stringify(b));
}

function binary(op: string, left: unknown, right: unknown): unknown {
  switch (op) {
    case "==":
      return isDeepStrictEqual(left, right);
    case "!=":
      return !isDeepStrictEqual(left, right);
    case "<":
      return compareValues(left, right) < 0;
    case "<=":
      return compareValues(left, right) <= 0;
    case ">":
      return compareValues(left, right) > 0;
    case ">=":
      return compareValues(left, right) >= 0;
  }
  if (op === "+") {
    if (left === null) return right;
    if (right === null) return left;
    if (typeof left === "number" && typeof right === "number") return left + right;
    if (typeof left === "string" && typeof right === "string") return left + right;
    if (Array.isArray(left) && Array.isArray(right)) return [...left, ...right];
    if (typeOf(left) === "object" && typeOf(right) === "object")
      return { ...(left as object), ...(right as object) };
  } else if (typeof left === "number" && typeof right === "number") {
    if ((op === "/" || op === "%") && right === 0) throw badRequest("division by zero");
    return op === "-" ? left - right : op === "*" ? left * right : op === "/" ? left / right : left % right;
  } else if (op === "-" && Array.isArray(left) && Array.isArray(right)) {
    return left.filter((item) => !right.some((other) => isDeepStrictEqual(item, other)));
  }
  throw badRequest(`cannot apply ${op} to ${typeOf(left)} and ${typeOf(right)}`);
}

type Eval = (node: Node, input: unknown) => unknown[];

const array = (value: unknown, name: string): unknown[] => {
  if (!Array.isArray(value)) throw badRequest(`${name} needs an array, not ${typeOf(value)}`);
  return value;
};

const one = (ev: Eval, node: Node | undefined, input: unknown, name: string): unknown => {
  if (!node) throw badRequest(`${name} needs an argument`);
  return ev(node, input)[0];
};

/** The builtins, each `(input, args, ev) → outputs`. */
const BUILTINS: Record<string, (input: unknown, args: Node[], ev: Eval) => unknown[]> = {
  empty: () => [],
  not: (input) => [!truthy(input)],
  length: (input) => [
    input === null
      ? 0
      : typeof input === "string" || Array.isArray(input)
        ? input.length
        : typeof input === "object"
          ? Object.keys(input as object).length
          : Math.abs(Number(input)),
  ],
  keys: (input) => [Array.isArray(input) ? input.map((_, k) => k) : Object.keys(iterateObject(input)).sort()],
  values: (input) => [iterate(input)],
  type: (input) => [typeOf(input)],
  map: (input, [f], ev) => [array(input, "map").flatMap((item) => ev(f as Node, item))],
  select: (input, [f], ev) => (ev(f as Node, input).some(truthy) ? [input] : []),
  has: (input, [k], ev) => [Object.hasOwn(iterateObject(input), String(one(ev, k, input, "has")))],
  sort: (input) => [[...array(input, "sort")].sort(compareValues)],
  sort_by: (input, [f], ev) => [
    [...array(input, "sort_by")].sort((a, b) => compareValues(ev(f as Node, a), ev(f as Node, b))),
  ],
  group_by: (input, [f], ev) => {
    const sorted = [...array(input, "group_by")].sort((a, b) =>
      compareValues(ev(f as Node, a), ev(f as Node, b)),
    );
    const groups: unknown[][] = [];
    for (const item of sorted) {
      const last = groups.at(-1);
      if (last && isDeepStrictEqual(ev(f as Node, last[0]), ev(f as Node, item))) last.push(item);
      else groups.push([item]);
    }
    return [groups];
  },
  unique: (input) => [
    [...array(input, "unique")]
      .sort(compareValues)
      .filter((item, k, all) => k === 0 || !isDeepStrictEqual(item, all[k - 1])),
  ],
  min: (input) => [[...array(input, "min")].sort(compareValues)[0] ?? null],
  max: (input) => [[...array(input, "max")].sort(compareValues).at(-1) ?? null],
  add: (input) => [
    array(input, "add").reduce((sum, item) => (sum === null ? item : binary("+", sum, item)), null),
  ],
  first: (input, [f], ev) => (f ? ev(f, input).slice(0, 1) : [array(input, "first")[0] ?? null]),
  last: (input, [f], ev) => (f ? ev(f, input).slice(-1) : [array(input, "last").at(-1) ?? null]),
  reverse: (input) => [
    typeof input === "string" ? [...input].reverse().join("") : [...array(input, "reverse")].reverse(),
  ],
  flatten: (input) => [array(input, "flatten").flat(Number.POSITIVE_INFINITY)],
  to_entries: (input) => [Object.entries(iterateObject(input)).map(([key, value]) => ({ key, value }))],
  from_entries: (input) => [
    Object.fromEntries(
      array(input, "from_entries").map((entry) => {
        const { key, name, k, value, v } = (entry ?? {}) as Record<string, unknown>;
        return [String(key ?? name ?? k), value ?? v ?? null];
      }),
    ),
  ],
  any: (input) => [array(input, "any").some(truthy)],
  all: (input) => [array(input, "all").every(truthy)],
  contains: (input, [x], ev) => [contains(input, one(ev, x, input, "contains"))],
  tostring: (input) => [typeof input === "string" ? input : JSON.stringify(input)],
  tonumber: (input) => {
    const n = Number(input);
    if (Number.isNaN(n)) throw badRequest(`cannot parse ${JSON.stringify(input)} as a number`);
    return [n];
  },
  ascii_downcase: (input) => [String(input).toLowerCase()],
  ascii_upcase: (input) => [String(input).toUpperCase()],
  split: (input, [s], ev) => [String(input).split(String(one(ev, s, input, "split")))],
  join: (input, [s], ev) => [
    array(input, "join")
      .map((item) => (item === null ? "" : String(item)))
      .join(String(one(ev, s, input, "join"))),
  ],
  startswith: (input, [s], ev) => [String(input).startsWith(String(one(ev, s, input, "startswith")))],
  endswith: (input, [s], ev) => [String(input).endsWith(String(one(ev, s, input, "endswith")))],
  floor: (input) => [Math.floor(Number(input))],
  range: (input, [n], ev) => {
    const count = Number(one(ev, n, input, "range"));
    if (count > MAX_OUTPUTS) throw badRequest(`range is limited to ${MAX_OUTPUTS}`);
    return Array.from({ length: Math.max(0, count) }, (_, k) => k);
  },
};

function iterateObject(input: unknown): Record<string, unknown> {
  if (typeOf(input) !== "object") throw badRequest(`needs an object, not ${typeOf(input)}`);
  return input as Record<string, unknown>;
}

function contains(a: unknown, b: unknown): boolean {
  if (typeof a === "string" && typeof b === "string") return a.includes(b);
  if (Array.isArray(a) && Array.isArray(b))
    return b.every((item) => a.some((other) => contains(other, item)));
  if (typeOf(a) === "object" && typeOf(b) === "object") {
    return Object.entries(b as object).every(
      ([key, value]) =>
        Object.hasOwn(a as object, key) && contains((a as Record<string, unknown>)[key], value),
    );
  }
  return isDeepStrictEqual(a, b);
}

function call(name: string, args: Node[], input: unknown, ev: Eval): unknown[] {
  const builtin = BUILTINS[name];
  if (!builtin)
    throw badRequest(`expression: unknown function ${name} (known: ${Object.keys(BUILTINS).join(", ")})`);
  return builtin(input, args, ev);
}
