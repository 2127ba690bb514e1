import { badRequest } from "../../shared/errors.ts";
import { isStorableText } from "../state/schema.ts";
import { int8Vector, storedCode, unitVector } from "./scan.ts";
import type { VectorEntry } from "./types.ts";

/** An entry ready to store: its stored code and int8 vector (see scan.ts). */
export interface EncodedEntry {
  id: string;
  code: Uint8Array;
  vec: Uint8Array;
}

/** Index, scope, model and ids are key-like text every backend can store (as the text index's). */
export function checkName(field: string, value: string, max = 1024): void {
  if (typeof value !== "string" || value.length === 0 || value.length > max || !isStorableText(value)) {
    throw badRequest(`${field}: must be 1 to ${max} characters of valid text without NUL`);
  }
}

export function checkScope(index: string, scope: string, model?: string): void {
  checkName("index", index, 256);
  checkName("scope", scope, 256);
  if (model !== undefined) checkName("model", model, 256);
}

/**
 * Validates and encodes a batch for a model of `dims` dimensions (null: its first vectors, which must
 * agree among themselves). A repeated id keeps its last vector. Throws before anything is stored.
 */
export function encodeEntries(entries: readonly VectorEntry[], dims: number | null): EncodedEntry[] {
  const byId = new Map<string, EncodedEntry>();
  let expected = dims ?? undefined;
  for (const entry of entries) {
    checkName("id", entry.id);
    const unit = unitVector(entry.vector, expected);
    expected = unit.length;
    byId.delete(entry.id);
    const vec = int8Vector(unit);
    byId.set(entry.id, { id: entry.id, code: storedCode(vec), vec });
  }
  return [...byId.values()];
}
