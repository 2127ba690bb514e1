import { isJsonObject } from "./json-object.ts";

/** The part of a function's JSON Schema (from engine::functions::info) a payload is checked against. */
export type InputSchema = {
  type?: string | string[];
  properties?: Record<string, InputSchema>;
  required?: string[];
  additionalProperties?: unknown;
};

/**
 * The parts of a JSON Schema (as engine::functions::info answers it) that payloadProblem reads, each kept
 * only when it has the shape it is read as: a schema from a remote worker is whatever it sent.
 */
export function inputSchemaOf(json: unknown): InputSchema {
  if (!isJsonObject(json)) return {};
  const { type, properties, required, additionalProperties } = json;
  return {
    ...(typeof type === "string" || (Array.isArray(type) && type.every((item) => typeof item === "string"))
      ? { type }
      : {}),
    ...(isJsonObject(properties)
      ? {
          properties: Object.fromEntries(
            Object.entries(properties).map(([field, schema]) => [field, inputSchemaOf(schema)]),
          ),
        }
      : {}),
    ...(Array.isArray(required)
      ? { required: required.filter((field): field is string => typeof field === "string") }
      : {}),
    ...("additionalProperties" in json ? { additionalProperties } : {}),
  };
}

/**
 * What is wrong with `payload` as `functionId`'s input, or null: a field the function does not take
 * (when it refuses unknown ones), a required field missing, or a value of the wrong JSON type. Values
 * `skip` accepts (templates filled in later) are not type-checked. A light check for writing time
 * (workflow steps, council proposals); the function's own validation still runs when it is called.
 */
export function payloadProblem(
  functionId: string,
  payload: Record<string, unknown>,
  schema: InputSchema,
  skip: (value: unknown) => boolean = () => false,
): string | null {
  const properties = schema.properties ?? {};
  if (schema.additionalProperties === false) {
    const extra = Object.keys(payload).find((key) => !Object.hasOwn(properties, key));
    if (extra !== undefined) {
      return `${extra} is not a field of ${functionId} (its fields: ${Object.keys(properties).join(", ") || "none"})`;
    }
  }
  const missing = (schema.required ?? []).filter((field) => !Object.hasOwn(payload, field));
  if (missing.length > 0) return `${functionId} requires ${missing.join(", ")}`;
  for (const [field, value] of Object.entries(payload)) {
    const expected = properties[field]?.type;
    if (!expected || skip(value)) continue;
    const types = Array.isArray(expected) ? expected : [expected];
    if (!types.some((type) => matchesType(value, type))) {
      return `${field} must be ${types.join(" or ")} for ${functionId}`;
    }
  }
  return null;
}

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "integer":
      return Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "null":
      return value === null;
    default:
      return true;
  }
}
