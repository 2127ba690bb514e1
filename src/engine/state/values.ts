import { badRequest } from "../../shared/errors.ts";

/** Largest serialized value a record may hold. */
export const MAX_VALUE_BYTES = 4 * 1024 * 1024;

export function serializeValue(value: unknown): string {
  if (value === undefined) throw badRequest("value: required (use state::delete to remove a key)");
  const text = JSON.stringify(value);
  if (text === undefined) throw badRequest("value: must be JSON");
  if (text.length * 3 > MAX_VALUE_BYTES && Buffer.byteLength(text) > MAX_VALUE_BYTES) {
    throw badRequest(`value: larger than ${MAX_VALUE_BYTES} bytes once serialized`);
  }
  return text;
}

export function versionConflictMessage(scope: string, key: string, expected: number, found: number): string {
  const state = found === 0 ? "the key does not exist" : `it is at version ${found}`;
  return `Version conflict on ${scope}/${key}: expected version ${expected}, but ${state}`;
}
