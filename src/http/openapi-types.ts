/**
 * TypeScript types written from the OpenAPI document: what each routed function answers, keyed by its
 * operationId (the function's id). The console reads its answers through these types, so a field the
 * service renames or drops no longer compiles there instead of showing blank in a browser.
 */

type Schema = Record<string, unknown>;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const REF = "#/components/schemas/";

const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));
const literal = (value: unknown) => JSON.stringify(value) ?? "null";

function comment(text: unknown, pad: string): string {
  if (typeof text !== "string" || text.trim() === "") return "";
  return `${pad}/** ${text.replace(/\*\//g, "* /").replace(/\s*\n\s*/g, " ")} */\n`;
}

/** A member of a union or an array's item that needs brackets to keep its meaning. */
const grouped = (type: string) => (/[|&]/.test(type) && !/^[{[(]/.test(type) ? `(${type})` : type);

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

interface Operation {
  operationId?: string;
  description?: string;
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

/** The JSON answer of an operation's first success status; undefined when it answers none (204, events). */
function answerOf(operation: Operation): Schema | undefined {
  const statuses = Object.keys(operation.responses ?? {})
    .filter((status) => /^2\d\d$/.test(status))
    .sort();
  for (const status of statuses) {
    const schema = operation.responses?.[status]?.content?.["application/json"]?.schema;
    if (schema) return schema;
  }
  return undefined;
}

/**
 * The module the console imports: `Answers`, each routed function's success answer by its id (functions
 * that answer no JSON are left out), and the shared schemas those answers refer to.
 */
export function renderAnswerTypes(document: {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}): string {
  const answers = new Map<string, { schema: Schema; description?: string }>();
  for (const path of Object.keys(document.paths).sort()) {
    for (const method of Object.keys(document.paths[path] ?? {}).sort()) {
      const operation = document.paths[path]?.[method] as Operation;
      const schema = answerOf(operation);
      if (!operation.operationId || !schema || answers.has(operation.operationId)) continue;
      answers.set(operation.operationId, { schema, description: operation.description });
    }
  }
  const shared = Object.entries(document.components?.schemas ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, schema]) => `${comment(schema.description, "")}export type ${name} = ${typeOf(schema)};\n`);
  // An answer the same as one written before (the migrate::<framework> functions, say) names that one.
  const written = new Map<string, string>();
  const entries = [...answers.keys()].sort().map((id) => {
    const answer = answers.get(id) as { schema: Schema; description?: string };
    const shape = JSON.stringify(answer.schema);
    const same = written.get(shape);
    if (same === undefined) written.set(shape, id);
    const type = same === undefined ? typeOf(answer.schema, "  ") : `Answers[${JSON.stringify(same)}]`;
    return `${comment(answer.description, "  ")}  ${JSON.stringify(id)}: ${type};\n`;
  });
  return [
    "// Written by `npm run console:types` from the service's OpenAPI document: do not edit by hand.\n",
    "// test/console/answer-types.test.ts fails when it no longer matches the document.\n\n",
    ...shared.map((line) => `${line}\n`),
    "/** What each routed function answers, by its id (the route's operationId). */\n",
    "export interface Answers {\n",
    ...entries,
    "}\n",
  ].join("");
}
