import { badRequest } from "../../../shared/errors.ts";

/** A jq expression parsed: its tree of nodes (jq.ts evaluates it). */
export function parseJq(expression: string): Node {
  const parser = new Parser(tokenize(expression));
  const ast = parser.pipe();
  parser.end();
  return ast;
}

type Token =
  | { kind: "num"; value: number }
  | { kind: "str"; value: string }
  | { kind: "id"; value: string }
  | { kind: "op"; value: string };
export type Node =
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
