import { z } from "zod";
import { updateOpSchema } from "./update-ops.ts";

/** Scope and key: non-empty, well-formed Unicode, no NUL (PostgreSQL text cannot hold it). */
const name = (field: string, max: number) =>
  z
    .string()
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`)
    .refine(
      (text) => text.isWellFormed() && !text.includes("\u0000"),
      `${field} must be valid text without NUL`,
    );

export const scopeSchema = name("scope", 256);
export const keySchema = name("key", 1024);
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
  prefix: z.string().max(1024).optional(),
  limit: z.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
  cursor: z.string().max(4096).optional(),
});

export const stateUpdateInput = z.strictObject({
  scope: scopeSchema,
  key: keySchema,
  ops: z.array(updateOpSchema).min(1).max(256),
  expectedVersion: version.optional(),
});
