import { z } from "zod";
import { updateOpSchema } from "./update-ops.ts";

/** Text that every backend can store as a key: well-formed Unicode without NUL (PostgreSQL text cannot hold it). */
export function isStorableText(text: string): boolean {
  return text.isWellFormed() && !text.includes("\u0000");
}

/** A key-like string (scope, key, prefix) of at most `max` characters. */
export const storableText = (field: string, max: number) =>
  z
    .string()
    .max(max, `${field} must be at most ${max} characters`)
    .refine(isStorableText, `${field} must be valid text without NUL`);

const name = (field: string, max: number) => storableText(field, max).min(1, `${field} must not be empty`);

/**
 * Most UTF-8 bytes of a state key. PostgreSQL refuses (as a failed statement) a primary-key entry over
 * about 2.7 kB, and 1024 characters may take 3 kB: with the longest scope (768 bytes) this still fits.
 */
export const MAX_KEY_BYTES = 1536;
/** Most UTF-8 bytes of a search or vector id, whose entry also holds the index name. */
export const MAX_ID_BYTES = 1024;

/** A non-empty key or id of at most 1024 characters and `maxBytes` as UTF-8, stored alike by every backend. */
export const storableKey = (field: string, maxBytes: number) =>
  name(field, 1024).refine(
    // A UTF-16 unit is at most 3 bytes of UTF-8: the usual short key needs no count.
    (text) => text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes,
    `${field} must be at most ${maxBytes} bytes as UTF-8`,
  );

export const scopeSchema = name("scope", 256);
export const keySchema = storableKey("key", MAX_KEY_BYTES);
const version = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const stateGetInput = z.strictObject({
  scope: scopeSchema,
  key: keySchema,
  withVersion: z.boolean().optional(),
});

export const stateSetInput = z.strictObject({
  scope: scopeSchema,
  key: keySchema,
  value: z.unknown(),
  expectedVersion: version.optional(),
});

export const stateDeleteInput = z.strictObject({
  scope: scopeSchema,
  key: keySchema,
  expectedVersion: version.optional(),
});

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

export const stateListInput = z.strictObject({
  scope: scopeSchema,
  prefix: storableText("prefix", 1024).optional(),
  limit: z.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
  cursor: z.string().max(4096).optional(),
});

export const stateListGroupsInput = z.strictObject({});

export const stateUpdateInput = z.strictObject({
  scope: scopeSchema,
  key: keySchema,
  ops: z.array(updateOpSchema).min(1).max(256),
  expectedVersion: version.optional(),
});

const batchOpSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("set"),
    scope: scopeSchema,
    key: keySchema,
    value: z.unknown(),
    expectedVersion: version.optional(),
  }),
  z.strictObject({
    type: z.literal("update"),
    scope: scopeSchema,
    key: keySchema,
    ops: z.array(updateOpSchema).min(1).max(256),
    expectedVersion: version.optional(),
  }),
  z.strictObject({
    type: z.literal("delete"),
    scope: scopeSchema,
    key: keySchema,
    expectedVersion: version.optional(),
  }),
]);

export const MAX_BATCH_OPS = 256;

export const stateBatchInput = z.strictObject({
  ops: z
    .array(batchOpSchema)
    .min(1, "ops must not be empty")
    .max(MAX_BATCH_OPS, `at most ${MAX_BATCH_OPS} ops`),
});
