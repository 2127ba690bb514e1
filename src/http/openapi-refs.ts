type Json = unknown;
type JsonObject = Record<string, Json>;

const isObject = (value: Json): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * zod writes a recursive schema's parts under the schema's own `$defs`, referenced as `#/$defs/<name>`.
 * Inside an OpenAPI document that reference would point at the document's root, so every `$defs` is
 * moved into `components.schemas` (under a name no other schema uses) and its references rewritten.
 */
export function hoistDefinitions(paths: JsonObject): Record<string, Json> {
  const schemas: Record<string, Json> = {};
  // The same definition met again (one schema used by several routes) keeps its first name.
  const named = new Map<string, string>();
  const visit = (node: Json, scope: Map<string, string>): Json => {
    if (Array.isArray(node)) return node.map((item) => visit(item, scope));
    if (!isObject(node)) return node;
    let names = scope;
    if (isObject(node.$defs)) {
      names = new Map(scope);
      const fresh: string[] = [];
      for (const [name, definition] of Object.entries(node.$defs)) {
        const key = `${name}\u0000${JSON.stringify(definition)}`;
        let target = named.get(key);
        if (target === undefined) {
          target = uniqueName(schemas, name);
          named.set(key, target);
          fresh.push(name);
        }
        names.set(name, target);
      }
      for (const name of fresh) schemas[names.get(name) as string] = visit(node.$defs[name], names);
    }
    const result: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "$defs") continue;
      if (key === "$ref" && typeof value === "string" && value.startsWith("#/$defs/")) {
        const target = names.get(value.slice("#/$defs/".length));
        result.$ref = target ? `#/components/schemas/${target}` : value;
      } else {
        result[key] = visit(value, names);
      }
    }
    return result;
  };
  for (const [path, operations] of Object.entries(paths)) paths[path] = visit(operations, new Map());
  return schemas;
}

function uniqueName(taken: Record<string, Json>, name: string): string {
  const base = name.replace(/^_+/, "") || "schema";
  let candidate = base;
  for (let n = 2; Object.hasOwn(taken, candidate); n++) candidate = `${base}${n}`;
  // Reserve it now: a definition may refer to itself before its body is built.
  taken[candidate] = {};
  return candidate;
}
