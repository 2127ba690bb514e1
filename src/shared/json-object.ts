export type JsonObject = Record<string, unknown>;

/** A plain object in JSON's sense: not null, not an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
