import { isDeepStrictEqual } from "node:util";
import { badRequest } from "../../../shared/errors.ts";

/**
 * A jq subset: paths (`.a.b`, `."k"`, `.[0]`, `.[]`, `.[1:3]`, `?`), pipes, `,`, `//`, arithmetic,
 * comparisons, `and`/`or`, literals, array and object construction, and the common builtins (see
 * BUILTINS). Every expression yields a list of outputs, as in jq.
 */
export function jq(expression: string, input: unknown): unknown[] {
  const parser = new Parser(tokenize(expression));
  const ast = parser.pipe();
  parser.end();
  const budget: Budget = { left: MAX_OUTPUTS, sizes: new WeakMap() };
  try {
    return evaluate(ast, input, budget);
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

interface Budget {
  left: number;
  /** Weights of the arrays and objects already weighed, by identity. */
  sizes: WeakMap<object, number>;
}

function weightOf(value: unknown, sizes: WeakMap<object, number>): number {
  if (typeof value === "string") return value.length + 2;
  if (value === null || typeof value !== "object") return 8;
  const known = sizes.get(value);
  if (known !== undefined) return known;
  let total = 2;
  if (Array.isArray(value)) {
    for (const item of value) {
      total += weightOf(item, sizes) + 1;
      if (total > MAX_VALUE_WEIGHT) break;
    }
  } else {
    for (const [key, item] of Object.entries(value)) {
      total += key.length + 4 + weightOf(item, sizes);
      if (total > MAX_VALUE_WEIGHT) break;
    }
  }
  sizes.set(value, total);
  return total;
}

type Token =
  | { kind: "num"; value: number }
  | { kind: "str"; value: string }
  | { kind: "id"; value: string }
  | { kind: "op"; value: string };
type Node =
  | { t: "identity" }
  | { t: "literal"; value: unknown }
  | { t: "field"; of: Node; name: Node; optional?: boolean }
  | { t: "iterate"; of: Node; optional?: boolean }
  | { t: "slice"; of: Node; from?: Node; to?: Node }
  | { t: "pipe" | "comma" | "alt" | "and" | "or"; left: Node; right: Node }
  | { t: "binary"; op: string; left: Node; right: Node }
  | { t: "array"; of?: Node }
  | { t: "object"; entries: Array<{ key: Node; value: Node }> }
  | { t: "call"; name: string; args: Node[] }
  | { t: "neg"; of: Node };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    if (/\s/.test(c)) i++;
    else if (/[0-9]/.test(c)) {
      const match = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(source.slice(i)) as RegExpExecArray;
      tokens.push({ kind: "num", value: Number(match[0]) });
      i += match[0].length;
    } else if (c === '"') {
      let j = i + 1;
      while (j < source.length && source[j] !== '"') j += source[j] === "\\" ? 2 : 1;
      if (j >= source.length) throw badRequest(`expression: unterminated string at ${i + 1}`);
      tokens.push({ kind: "str", value: JSON.parse(source.slice(i, j + 1)) as string });
      i = j + 1;
    } else if (/[A-Za-z_$]/.test(c)) {
      const match = /^[A-Za-z_$][A-Za-z0-9_]*/.exec(source.slice(i)) as RegExpExecArray;
      tokens.push({ kind: "id", value: match[0] });
      i += match[0].length;
    } else {
      const op = ["==", "!=", "<=", ">=", "//", ".."].find((two) => source.startsWith(two, i)) ?? c;
      if (!"==!=<=>=//...[](){}|,:;<>+-*/%?".includes(op))
        throw badRequest(`expression: unexpected ${JSON.stringify(c)} at ${i + 1}`);
      tokens.push({ kind: "op", value: op });
      i += op.length;
    }
  }
  return tokens;
}

class Parser {
  private at = 0;
  private readonly tokens: Token[];
  constructor(tokens: Token[]) {
    this.tokens = tokens;
  }
  private peek = (value?: string) => {
    const token = this.tokens[this.at];
    return value === undefined
      ? token
      : token && (token.kind === "op" || token.kind === "id") && token.value === value;
  };
  private take(value: string): void {
    if (!this.peek(value)) throw badRequest(`expression: expected ${value} at token ${this.at + 1}`);
    this.at++;
  }
  end(): void {
    if (this.at < this.tokens.length)
      throw badRequest(`expression: unexpected ${JSON.stringify((this.tokens[this.at] as Token).value)}`);
  }
  pipe(): Node {
    let left = this.comma();
    while (this.peek("|")) {
      this.at++;
      left = { t: "pipe", left, right: this.comma() };
    }
    return left;
  }
  private comma(): Node {
    let left = this.alt();
    while (this.peek(",")) {
      this.at++;
      left = { t: "comma", left, right: this.alt() };
    }
    return left;
  }
  private binaryLevel(
    next: () => Node,
    ops: string[],
    make: (op: string, left: Node, right: Node) => Node,
  ): Node {
    let left = next();
    for (let op = ops.find((o) => this.peek(o)); op; op = ops.find((o) => this.peek(o))) {
      this.at++;
      left = make(op, left, next());
    }
    return left;
  }
  private alt = (): Node =>
    this.binaryLevel(this.or, ["//"], (_, left, right) => ({ t: "alt", left, right }));
  private or = (): Node => this.binaryLevel(this.and, ["or"], (_, left, right) => ({ t: "or", left, right }));
  private and = (): Node =>
    this.binaryLevel(this.compare, ["and"], (_, left, right) => ({ t: "and", left, right }));
  private compare = (): Node =>
    this.binaryLevel(this.additive, ["==", "!=", "<=", ">=", "<", ">"], (op, left, right) => ({
      t: "binary",
      op,
      left,
      right,
    }));
  private additive = (): Node =>
    this.binaryLevel(this.multiplicative, ["+", "-"], (op, left, right) => ({
      t: "binary",
      op,
      left,
      right,
    }));
  private multiplicative = (): Node =>
    this.binaryLevel(
      () => this.postfix(),
      ["*", "/", "%"],
      (op, left, right) => ({ t: "binary", op, left, right }),
    );

  private postfix(): Node {
    let node = this.primary();
    for (;;) {
      if (this.peek(".") && this.tokens[this.at + 1]?.kind !== "op") {
        this.at++;
        node = { t: "field", of: node, name: { t: "literal", value: this.name() } };
      } else if (this.peek("[")) node = this.bracket(node);
      else if (this.peek("?")) {
        this.at++;
        if (node.t === "field" || node.t === "iterate") node = { ...node, optional: true };
      } else return node;
    }
  }
  private name(): string {
    const token = this.tokens[this.at++];
    if (!token || (token.kind !== "id" && token.kind !== "str"))
      throw badRequest("expression: expected a field name after .");
    return token.value;
  }
  private bracket(of: Node): Node {
    this.take("[");
    if (this.peek("]")) {
      this.at++;
      return { t: "iterate", of };
    }
    const from = this.peek(":") ? undefined : this.pipe();
    if (this.peek(":")) {
      this.at++;
      const to = this.peek("]") ? undefined : this.pipe();
      this.take("]");
      return { t: "slice", of, from, to };
    }
    this.take("]");
    return { t: "field", of, name: from as Node };
  }
  private primary(): Node {
    const token = this.tokens[this.at];
    if (!token) throw badRequest("expression: ends too early");
    this.at++;
    if (token.kind === "num" || token.kind === "str") return { t: "literal", value: token.value };
    if (token.kind === "op") {
      if (token.value === ".") {
        const next = this.tokens[this.at];
        if (next && (next.kind === "id" || next.kind === "str"))
          return { t: "field", of: { t: "identity" }, name: { t: "literal", value: this.name() } };
        return { t: "identity" };
      }
      if (token.value === "(") {
        const inner = this.pipe();
        this.take(")");
        return inner;
      }
      if (token.value === "[") {
        if (this.peek("]")) {
          this.at++;
          return { t: "array" };
        }
        const of = this.pipe();
        this.take("]");
        return { t: "array", of };
      }
      if (token.value === "{") return this.object();
      if (token.value === "-") return { t: "neg", of: this.postfix() };
      throw badRequest(`expression: unexpected ${token.value}`);
    }
    if (token.value === "true" || token.value === "false")
      return { t: "literal", value: token.value === "true" };
    if (token.value === "null") return { t: "literal", value: null };
    const args: Node[] = [];
    if (this.peek("(")) {
      this.at++;
      args.push(this.pipe());
      while (this.peek(";")) {
        this.at++;
        args.push(this.pipe());
      }
      this.take(")");
    }
    return { t: "call", name: token.value, args };
  }
  private object(): Node {
    const entries: Array<{ key: Node; value: Node }> = [];
    while (!this.peek("}")) {
      let key: Node;
      if (this.peek("(")) {
        this.at++;
        key = this.pipe();
        this.take(")");
      } else {
        key = { t: "literal", value: this.name() };
      }
      let value: Node = { t: "field", of: { t: "identity" }, name: key };
      if (this.peek(":")) {
        this.at++;
        value = this.alt();
      }
      entries.push({ key, value });
      if (!this.peek(",")) break;
      this.at++;
    }
    this.take("}");
    return { t: "object", entries };
  }
}

const typeOf = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);
const truthy = (value: unknown) => value !== false && value !== null;

function evaluate(node: Node, input: unknown, budget: Budget): unknown[] {
  const out = (values: unknown[]) => {
    budget.left -= values.length;
    if (budget.left < 0) throw badRequest(`expression produced more than ${MAX_OUTPUTS} values`);
    for (const value of values)
      if (weightOf(value, budget.sizes) > MAX_VALUE_WEIGHT)
        throw badRequest(`expression built a value of more than ${MAX_VALUE_WEIGHT} bytes as JSON`);
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
      return out(call(node.name, node.args, input, (n, value) => ev(n, value)));
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
