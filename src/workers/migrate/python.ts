import { createRequire } from "node:module";
import { Language, type Node, Parser } from "web-tree-sitter";
import { MigrationInputError } from "./model.ts";

/**
 * Python source read with tree-sitter's Python grammar (WebAssembly, no native build): the constructs a
 * migration needs — calls with their keyword arguments, assignments, decorated functions, docstrings —
 * found in the syntax tree, never by matching lines.
 */
let parser: Promise<Parser> | undefined;

function pythonParser(): Promise<Parser> {
  parser ??= (async () => {
    await Parser.init();
    const wasm = createRequire(import.meta.url).resolve("tree-sitter-python/tree-sitter-python.wasm");
    const instance = new Parser();
    instance.setLanguage(await Language.load(wasm));
    return instance;
  })();
  return parser;
}

export interface PythonModule {
  file: string;
  root: Node;
  /** Module-level and function-level `name = value` assignments, by name (the last one wins). */
  assignments: Map<string, Node>;
}

/** Parses a file; a syntax error is a MigrationInputError naming the file and its first bad line. */
export async function parsePython(file: string, text: string): Promise<PythonModule> {
  const tree = (await pythonParser()).parse(text);
  if (!tree) throw new MigrationInputError(file, "could not be parsed as Python");
  const root = tree.rootNode;
  if (root.hasError) {
    const bad = root.descendantsOfType("ERROR")[0] ?? firstMissing(root);
    throw new MigrationInputError(file, "is not valid Python", (bad?.startPosition.row ?? 0) + 1);
  }
  const assignments = new Map<string, Node>();
  for (const node of root.descendantsOfType("assignment")) {
    const left = node.childForFieldName("left");
    const right = node.childForFieldName("right");
    if (left?.type === "identifier" && right) assignments.set(left.text, right);
  }
  return { file, root, assignments };
}

function firstMissing(node: Node): Node | undefined {
  if (node.isMissing) return node;
  for (const child of node.children) {
    if (!child) continue;
    const found = firstMissing(child);
    if (found) return found;
  }
  return undefined;
}

export const lineOf = (module: PythonModule, node: Node) => `${module.file}:${node.startPosition.row + 1}`;

/** The called name's last part: `langgraph.prebuilt.create_react_agent(...)` → `create_react_agent`. */
export function calleeName(call: Node): string | undefined {
  const fn = call.childForFieldName("function");
  if (!fn) return undefined;
  if (fn.type === "identifier") return fn.text;
  if (fn.type === "attribute") return fn.childForFieldName("attribute")?.text;
  return undefined;
}

/** The full callee text: `ChatPromptTemplate.from_messages`. */
export const calleeText = (call: Node) => call.childForFieldName("function")?.text ?? "";

export function calls(module: PythonModule, names: ReadonlySet<string>): Node[] {
  return module.root.descendantsOfType("call").filter((call) => names.has(calleeName(call) ?? ""));
}

export function keywordArgs(call: Node): Map<string, Node> {
  const args = new Map<string, Node>();
  for (const arg of call.childForFieldName("arguments")?.namedChildren ?? []) {
    if (arg?.type !== "keyword_argument") continue;
    const name = arg.childForFieldName("name")?.text;
    const value = arg.childForFieldName("value");
    if (name && value) args.set(name, value);
  }
  return args;
}

export function positionalArgs(call: Node): Node[] {
  return (call.childForFieldName("arguments")?.namedChildren ?? []).filter(
    (arg): arg is Node => arg !== null && arg.type !== "keyword_argument" && arg.type !== "comment",
  );
}

/** A keyword argument, else the positional one at `index`. */
export function argument(call: Node, keywords: string[], index?: number): Node | undefined {
  const named = keywordArgs(call);
  for (const keyword of keywords) {
    const value = named.get(keyword);
    if (value) return value;
  }
  return index === undefined ? undefined : positionalArgs(call)[index];
}

/** Follows a name to what it was assigned (at most a few hops). */
export function resolve(module: PythonModule, node: Node | undefined): Node | undefined {
  let current = node;
  for (let hop = 0; current?.type === "identifier" && hop < 5; hop++) {
    const next = module.assignments.get(current.text);
    if (!next || next === current) break;
    current = next;
  }
  return current;
}

/** A string literal's value (implicit concatenation and triple quotes included), following names. */
export function stringValue(module: PythonModule, node: Node | undefined): string | undefined {
  const value = resolve(module, node);
  if (!value) return undefined;
  if (value.type === "concatenated_string")
    return value.namedChildren.map((part) => (part ? (stringValue(module, part) ?? "") : "")).join("");
  if (value.type === "parenthesized_expression")
    return stringValue(module, value.namedChildren[0] ?? undefined);
  if (value.type !== "string") return undefined;
  const raw = /[rR]/.test(value.namedChildren.find((part) => part?.type === "string_start")?.text ?? "");
  // An f-string keeps its placeholders as written.
  return value.namedChildren
    .filter(
      (part): part is Node =>
        part !== null &&
        (part.type === "string_content" || part.type === "interpolation" || part.type === "escape_sequence"),
    )
    .map((part) => (raw || part.type === "interpolation" ? part.text : unescapePython(part.text)))
    .join("");
}

const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "\\": "\\",
  '"': '"',
  "'": "'",
  "\n": "",
  a: "\u0007",
  b: "\b",
  f: "\f",
  v: "\v",
  "0": "\0",
};

/** Python's backslash escapes in a (non-raw) string literal's text. */
function unescapePython(text: string): string {
  return text.replace(
    /\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[\s\S])/g,
    (whole, code: string) => {
      if (/^[xuU]/.test(code) && code.length > 1)
        return String.fromCodePoint(Number.parseInt(code.slice(1), 16));
      return ESCAPES[code] ?? whole;
    },
  );
}

export function numberValue(module: PythonModule, node: Node | undefined): number | undefined {
  const value = resolve(module, node);
  if (value?.type !== "integer" && value?.type !== "float") return undefined;
  const number = Number(value.text.replace(/_/g, ""));
  return Number.isFinite(number) ? number : undefined;
}

/** The elements of a list or tuple literal (following a name to one). */
export function listItems(module: PythonModule, node: Node | undefined): Node[] {
  const value = resolve(module, node);
  if (value?.type !== "list" && value?.type !== "tuple") return [];
  return value.namedChildren.filter((item): item is Node => item !== null && item.type !== "comment");
}

/** A function's docstring: the first statement when it is a string. */
export function docstring(module: PythonModule, fn: Node): string | undefined {
  const first = fn.childForFieldName("body")?.namedChildren[0];
  if (first?.type !== "expression_statement") return undefined;
  const text = stringValue(module, first.namedChildren[0] ?? undefined);
  return text?.trim() || undefined;
}

/** Functions decorated with one of `decorators` (`@tool`, `@tool("name")`, `@agent`). */
export function decoratedFunctions(
  module: PythonModule,
  decorators: ReadonlySet<string>,
): Array<{ decorator: string; fn: Node; decoratorNode: Node }> {
  const found = [];
  for (const node of module.root.descendantsOfType("decorated_definition")) {
    const fn = node.childForFieldName("definition");
    if (fn?.type !== "function_definition") continue;
    for (const decoratorNode of node.namedChildren) {
      if (decoratorNode?.type !== "decorator") continue;
      const expression = decoratorNode.namedChildren[0];
      const name = expression?.type === "call" ? calleeName(expression) : expression?.text.split(".").at(-1);
      if (name && decorators.has(name)) found.push({ decorator: name, fn, decoratorNode });
    }
  }
  return found;
}

/** The value a function returns (its first `return`). */
export function returned(fn: Node): Node | undefined {
  return fn.descendantsOfType("return_statement")[0]?.namedChildren[0] ?? undefined;
}
