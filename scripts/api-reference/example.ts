/**
 * An example value synthesized from a JSON Schema (as zod writes it into the OpenAPI document): the
 * schema's own `examples`/`example`/`default`/`const`/`enum[0]` where it has one, otherwise a value of
 * its type within its bounds. Objects get their required properties always and their optional ones only
 * when there are few; arrays get one item; `anyOf`/`oneOf` take their first branch that is not null;
 * `$ref`s into `#/components/schemas/` are followed, a cycle or too deep a nesting ending in an empty value.
 */

export type Schema = Record<string, unknown>;

const REF = "#/components/schemas/";
/** An object's optional properties are shown when it has at most this many properties in all. */
const FEW_PROPERTIES = 4;
const MAX_DEPTH = 8;

const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

interface Walk {
  components: Record<string, unknown>;
  refs: string[];
  depth: number;
}

/** The schema a `$ref` names, or undefined when it points elsewhere or is missing. */
export function resolveRef(schema: Schema, components: Record<string, unknown> = {}): Schema | undefined {
  const ref = schema.$ref;
  if (typeof ref !== "string") return schema;
  if (!ref.startsWith(REF)) return undefined;
  const target = components[ref.slice(REF.length)];
  return isSchema(target) ? target : undefined;
}

/** An example for `schema`; `name` is the property it fills, used for placeholder strings. */
export function exampleOf(
  schema: unknown,
  components: Record<string, unknown> = {},
  name = "value",
): unknown {
  return example(schema, name, { components, refs: [], depth: 0 });
}

function example(schema: unknown, name: string, walk: Walk): unknown {
  if (!isSchema(schema)) return null;
  if (typeof schema.$ref === "string") {
    const target = resolveRef(schema, walk.components);
    if (!target || walk.refs.includes(schema.$ref)) return emptyOf(target ?? {});
    return example(target, name, { ...walk, refs: [...walk.refs, schema.$ref] });
  }
  if (walk.depth > MAX_DEPTH) return emptyOf(schema);
  const given = givenValue(schema);
  if (given.found) return given.value;
  const inner = { ...walk, depth: walk.depth + 1 };
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches) && branches.length > 0) {
    const chosen = branches.find((branch) => !isNullSchema(branch)) ?? branches[0];
    return example({ ...withoutKeys(schema, ["anyOf", "oneOf"]), ...(chosen as Schema) }, name, walk);
  }
  if (Array.isArray(schema.allOf)) return allOf(schema, name, inner);
  switch (typeOfSchema(schema)) {
    case "string":
      return stringExample(schema, name);
    case "integer":
      return numberExample(schema, true);
    case "number":
      return numberExample(schema, false);
    case "boolean":
      return true;
    case "null":
      return null;
    case "array":
      return arrayExample(schema, name, inner);
    case "object":
      return objectExample(schema, inner);
    default:
      // No type: anything goes (zod's unknown); an empty object reads as "some JSON".
      return {};
  }
}

function givenValue(schema: Schema): { found: boolean; value?: unknown } {
  if (Array.isArray(schema.examples) && schema.examples.length > 0)
    return { found: true, value: schema.examples[0] };
  if ("example" in schema) return { found: true, value: schema.example };
  if ("const" in schema) return { found: true, value: schema.const };
  if ("default" in schema) return { found: true, value: schema.default };
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return { found: true, value: schema.enum[0] };
  return { found: false };
}

const isNullSchema = (schema: unknown) =>
  isSchema(schema) && (schema.type === "null" || schema.const === null);

const withoutKeys = (schema: Schema, keys: string[]) =>
  Object.fromEntries(Object.entries(schema).filter(([key]) => !keys.includes(key)));

/** The schema's type: its `type` (the first that is not null), or what its keywords imply. */
export function typeOfSchema(schema: Schema): string | undefined {
  const { type } = schema;
  if (typeof type === "string") return type;
  if (Array.isArray(type)) return (type.find((item) => item !== "null") ?? type[0]) as string | undefined;
  if (isSchema(schema.properties) || "additionalProperties" in schema) return "object";
  if ("items" in schema || "prefixItems" in schema) return "array";
  return undefined;
}

/** What a value of the schema's type looks like when nothing more can be said. */
function emptyOf(schema: Schema): unknown {
  switch (typeOfSchema(schema)) {
    case "array":
      return [];
    case "object":
      return {};
    case "string":
      return "";
    case "boolean":
      return false;
    case "integer":
    case "number":
      return numberExample(schema, schema.type === "integer");
    default:
      return null;
  }
}

const FORMATS: Record<string, string> = {
  "date-time": "2026-01-01T00:00:00.000Z",
  date: "2026-01-01",
  time: "00:00:00",
  uri: "https://example.com/",
  url: "https://example.com/",
  email: "user@example.com",
  uuid: "00000000-0000-4000-8000-000000000000",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
  hostname: "example.com",
};

function stringExample(schema: Schema, name: string): string {
  const format = typeof schema.format === "string" ? FORMATS[schema.format] : undefined;
  let text = format ?? `<${name}>`;
  if (typeof schema.pattern === "string") {
    const pattern = safeRegExp(schema.pattern);
    const fits = [text, name, "example", "a", "1", "2026-01", "2026-01-01", "A"];
    text = (pattern && fits.find((candidate) => pattern.test(candidate))) || text;
  }
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Number.POSITIVE_INFINITY;
  if (text.length < min) text = text.padEnd(min, "x");
  if (text.length > max) text = text.slice(0, max);
  return text;
}

function safeRegExp(source: string): RegExp | undefined {
  try {
    return new RegExp(source, "u");
  } catch {
    return undefined;
  }
}

function numberExample(schema: Schema, integer: boolean): number {
  const step = integer ? 1 : 0.5;
  const low =
    typeof schema.minimum === "number"
      ? schema.minimum
      : typeof schema.exclusiveMinimum === "number"
        ? schema.exclusiveMinimum + step
        : undefined;
  const high =
    typeof schema.maximum === "number"
      ? schema.maximum
      : typeof schema.exclusiveMaximum === "number"
        ? schema.exclusiveMaximum - step
        : undefined;
  // 1 where the bounds allow it, else the nearest bound (integers rounded inwards).
  let value = 1;
  if (low !== undefined && value < low) value = integer ? Math.ceil(low) : low;
  if (high !== undefined && value > high) value = integer ? Math.floor(high) : high;
  return value;
}

function arrayExample(schema: Schema, name: string, walk: Walk): unknown[] {
  const item = singular(name);
  if (Array.isArray(schema.prefixItems)) return schema.prefixItems.map((part) => example(part, item, walk));
  const max = typeof schema.maxItems === "number" ? schema.maxItems : 1;
  const count = Math.min(Math.max(1, typeof schema.minItems === "number" ? schema.minItems : 1), max);
  if (schema.uniqueItems === true && count > 1) return [example(schema.items, item, walk)];
  return Array.from({ length: count }, () => example(schema.items, item, walk));
}

const singular = (name: string) => (name.length > 3 && name.endsWith("s") ? name.slice(0, -1) : name);

function objectExample(schema: Schema, walk: Walk): Record<string, unknown> {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const names = Object.keys(properties);
  const shown = names.length <= FEW_PROPERTIES ? names : names.filter((name) => required.has(name));
  const result: Record<string, unknown> = {};
  for (const name of shown) result[name] = example(properties[name], name, walk);
  return result;
}

function allOf(schema: Schema, name: string, walk: Walk): unknown {
  const parts = (schema.allOf as unknown[]).map((part) => example(part, name, walk));
  if (parts.every(isSchema)) return Object.assign({}, ...parts);
  return parts[0] ?? null;
}
