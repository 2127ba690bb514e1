/**
 * TypeScript types written from JSON Schema (the subset zod writes): the console's answer types and the
 * engine's map of every function's input and answer are both generated with it.
 */

export type Schema = Record<string, unknown>;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
export const REF = "#/components/schemas/";

const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));
const literal = (value: unknown) => JSON.stringify(value) ?? "null";

export function comment(text: unknown, pad: string): string {
  if (typeof text !== "string" || text.trim() === "") return "";
  return `${pad}/** ${text.replace(/\*\//g, "* /").replace(/\s*\n\s*/g, " ")} */\n`;
}

/** Whether a type has a `|` or `&` outside every bracket and string: `{ a: 1 } | { b: 2 }` has. */
function combinesAtTop(type: string): boolean {
  let depth = 0;
  let quote = false;
  for (let i = 0; i < type.length; i++) {
    const char = type[i];
    if (quote) {
      if (char === "\\") i++;
      else if (char === '"') quote = false;
    } else if (char === '"') quote = true;
    else if (char === "{" || char === "[" || char === "(" || char === "<") depth++;
    else if (char === "}" || char === "]" || char === ")" || char === ">") depth--;
    else if (depth === 0 && (char === "|" || char === "&")) return true;
  }
  return false;
}

/** A member of a union or an array's item that needs brackets to keep its meaning. */
const grouped = (type: string) => (combinesAtTop(type) ? `(${type})` : type);

function union(types: string[]): string {
  const unique = [...new Set(types)];
  if (unique.includes("unknown")) return "unknown";
  return unique.length === 0 ? "never" : unique.join(" | ");
}

function objectType(schema: Schema, pad: string): string {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  const inner = `${pad}  `;
  const lines = Object.entries(properties).map(
    ([name, property]) =>
      `${comment(property.description, inner)}${inner}${key(name)}${required.has(name) ? "" : "?"}: ${typeOf(property, inner)};\n`,
  );
  const extra = schema.additionalProperties;
  if (extra !== undefined && extra !== false) {
    const values = extra === true ? "unknown" : typeOf(extra as Schema, inner);
    if (lines.length === 0) return `Record<string, ${values}>`;
    // Named properties must fit the index signature, whatever the others hold.
    lines.push(`${inner}[key: string]: unknown;\n`);
  }
  if (lines.length === 0) return extra === false ? "Record<string, never>" : "Record<string, unknown>";
  return `{\n${lines.join("")}${pad}}`;
}

function typeOfKind(kind: string, schema: Schema, pad: string): string {
  switch (kind) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      if (Array.isArray(schema.prefixItems)) {
        return `[${(schema.prefixItems as Schema[]).map((item) => typeOf(item, pad)).join(", ")}]`;
      }
      const items = schema.items as Schema | undefined;
      return `${grouped(items ? typeOf(items, pad) : "unknown")}[]`;
    }
    case "object":
      return objectType(schema, pad);
    default:
      return "unknown";
  }
}

/** The TypeScript type of a JSON Schema (the subset zod writes), laid out at indentation `pad`. */
export function typeOf(schema: Schema | boolean | undefined, pad = ""): string {
  if (schema === undefined || schema === true) return "unknown";
  if (schema === false) return "never";
  if (typeof schema.$ref === "string") {
    return schema.$ref.startsWith(REF) ? schema.$ref.slice(REF.length) : "unknown";
  }
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
  for (const combined of ["anyOf", "oneOf"] as const) {
    const members = schema[combined];
    if (Array.isArray(members)) return union(members.map((member: Schema) => grouped(typeOf(member, pad))));
  }
  if (Array.isArray(schema.allOf)) {
    return (schema.allOf as Schema[]).map((member) => grouped(typeOf(member, pad))).join(" & ") || "unknown";
  }
  const kind = schema.type;
  if (Array.isArray(kind)) return union(kind.map((each: string) => grouped(typeOfKind(each, schema, pad))));
  if (typeof kind === "string") return typeOfKind(kind, schema, pad);
  if (schema.properties) return objectType(schema, pad);
  return "unknown";
}
