/**
 * An MCP server's input schema becomes the function's validator (zod's fromJSONSchema), run on every
 * call. Through `$ref` a schema of a few hundred bytes can make that validator endless: a reference that
 * comes back to itself without a property or item in between (`#/$defs/a` → `#/$defs/a`, or `allOf` of
 * `#`) applies the same schema to the same value forever (a stack overflow on each call), and references
 * doubling at each step (`anyOf: [#/$defs/b, #/$defs/b]`, thirty deep) check one value a billion times.
 * Those are found here, before anything is registered.
 */

/** Schemas one value may be checked against, counted through references: past this, the schema is refused. */
export const MAX_SCHEMAS_PER_VALUE = 1000;

/** Levels of nesting (objects and arrays) walked: a tool's arguments are never near this deep. */
export const MAX_DEPTH = 200;

type Node = Record<string, unknown>;

/** Keywords whose schemas apply to the same value as the schema holding them. */
const SAME_VALUE_LISTS = ["allOf", "anyOf", "oneOf"];
const SAME_VALUE_ONES = ["not", "if", "then", "else"];
/** Keywords whose values are data, not schemas (a `$ref` inside them refers to nothing). */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples", "required"]);
/** Keywords whose values map names (not keywords) to schemas. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Why `schema` would make its validator endless or explode, or undefined when it is fine. References
 * resolve as zod resolves them: `#` is the root, `#/$defs/<name>` (or `#/definitions/<name>`) the root's
 * definition of that name.
 */
export function refProblem(schema: Record<string, unknown>): string | undefined {
  const definitions = isNode(schema.$defs)
    ? schema.$defs
    : isNode(schema.definitions)
      ? schema.definitions
      : {};
  // As zod's resolveRef reads them (its split drops empty segments: `#//$defs/a/` is `#/$defs/a`).
  const resolve = (ref: string): Node | undefined => {
    if (!ref.startsWith("#")) return undefined;
    const [where, name] = ref.slice(1).split("/").filter(Boolean);
    if (where === undefined) return schema;
    if ((where !== "$defs" && where !== "definitions") || !name) return undefined;
    const target = definitions[name.replace(/~1/g, "/").replace(/~0/g, "~")];
    return isNode(target) ? target : undefined;
  };

  /** Schemas checked against one value by `node`, itself included; memoized, each node counted once. */
  const counted = new Map<Node, number>();
  const path: Array<{ node: Node; name: string }> = [];
  const sameValueCount = (node: Node, name: string): number => {
    const known = counted.get(node);
    if (known !== undefined) return known;
    const seen = path.findIndex((step) => step.node === node);
    if (seen >= 0) throw new RefLoop([...path.slice(seen).map((step) => step.name), name]);
    // Every schema on the way is checked against the value too: a chain this long is over the limit.
    if (path.length >= MAX_SCHEMAS_PER_VALUE) throw new RefExplosion();
    path.push({ node, name });
    let count = 1;
    for (const [child, childName] of sameValueChildren(node, name, resolve)) {
      count += sameValueCount(child, childName);
      if (count > MAX_SCHEMAS_PER_VALUE) throw new RefExplosion();
    }
    path.pop();
    counted.set(node, count);
    return count;
  };

  try {
    visitSchemas(schema, "#", 0, (node, name) => void sameValueCount(node, name));
  } catch (error) {
    if (error instanceof TooDeep) return `nests schemas more than ${MAX_DEPTH} deep`;
    if (error instanceof RefLoop)
      return `refers to itself through $ref with no property or item in between (${error.path.join(" → ")})`;
    if (error instanceof RefExplosion)
      return `checks one value against more than ${MAX_SCHEMAS_PER_VALUE} schemas through $ref`;
    throw error;
  }
  return undefined;
}

class RefLoop extends Error {
  readonly path: string[];
  constructor(path: string[]) {
    super("$ref loop");
    this.path = path;
  }
}

class RefExplosion extends Error {}

class TooDeep extends Error {}

/** The schemas `node` applies to its own value, each with a name for a loop's description. */
function* sameValueChildren(
  node: Node,
  name: string,
  resolve: (ref: string) => Node | undefined,
): Generator<[Node, string]> {
  if (typeof node.$ref === "string") {
    const target = resolve(node.$ref);
    if (target) yield [target, node.$ref];
  }
  for (const key of SAME_VALUE_LISTS) {
    const list = node[key];
    if (Array.isArray(list))
      for (const [index, item] of list.entries()) if (isNode(item)) yield [item, `${name}/${key}/${index}`];
  }
  for (const key of SAME_VALUE_ONES) if (isNode(node[key])) yield [node[key] as Node, `${name}/${key}`];
  if (isNode(node.dependentSchemas))
    for (const [field, sub] of Object.entries(node.dependentSchemas))
      if (isNode(sub)) yield [sub, `${name}/dependentSchemas/${field}`];
}

/**
 * Every schema object of the document: under any keyword but those holding data (const, enum, default,
 * examples), and each value of a map of names (properties, $defs…) whatever the name.
 */
function visitSchemas(
  node: Node,
  name: string,
  depth: number,
  visit: (node: Node, name: string) => void,
): void {
  if (depth > MAX_DEPTH) throw new TooDeep();
  visit(node, name);
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYWORDS.has(key)) continue;
    const where = `${name}/${key}`;
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries())
        if (isNode(item)) visitSchemas(item, `${where}/${index}`, depth + 1, visit);
    } else if (isNode(value)) {
      if (!SCHEMA_MAPS.has(key)) visitSchemas(value, where, depth + 1, visit);
      else
        for (const [field, sub] of Object.entries(value))
          if (isNode(sub)) visitSchemas(sub, `${where}/${field}`, depth + 2, visit);
    }
  }
}
