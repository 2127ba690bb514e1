import { badRequest } from "../../shared/errors.ts";
import { isStorableText } from "../state/schema.ts";
import { serializeValue } from "../state/values.ts";
import type { TextDoc } from "./types.ts";

/** Largest text a document may have (PostgreSQL's tsvector holds at most 1 MiB of lexemes). */
export const MAX_TEXT_BYTES = 256 * 1024;

/**
 * A document's stored fields, checked alike for every backend: text within MAX_TEXT_BYTES and free
 * of NUL, data as JSON text (state's limits apply), and the creation time in ms.
 */
export function documentFields(doc: TextDoc): { data: string; createdMs: number } {
  if (!isStorableText(doc.text)) throw badRequest("text: must be valid text without NUL");
  if (doc.text.length > MAX_TEXT_BYTES / 3 && Buffer.byteLength(doc.text) > MAX_TEXT_BYTES) {
    throw badRequest(`text: larger than ${MAX_TEXT_BYTES} bytes`);
  }
  const createdMs = Date.parse(doc.createdAt);
  if (!Number.isFinite(createdMs)) throw badRequest("createdAt: not a date");
  return { data: serializeValue(doc.data ?? null), createdMs };
}
