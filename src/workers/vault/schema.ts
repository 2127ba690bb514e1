import { z } from "zod";
import { storableText } from "../../engine/state/schema.ts";

export const MAX_SECRET_BYTES = 64 * 1024;

/**
 * Secret names such as `provider:openai:api_key` or `channel:slack:signing_secret`: no whitespace,
 * control characters or "/", so a name is also a clean path segment of DELETE /api/vault/:key.
 */
export const vaultKeyName = z
  .string()
  .min(1, "key must not be empty")
  .max(256, "key must be at most 256 characters")
  .regex(/^[^\s/\p{Cc}]+$/u, "key must not contain whitespace, control characters or '/'")
  .refine((name) => name.isWellFormed(), "key must be valid text");

const secretValue = z
  .string()
  .min(1, "value must not be empty")
  // A lone surrogate cannot be encoded as UTF-8: it would be stored as U+FFFD, another secret than sent.
  .refine((value) => value.isWellFormed(), "value must be valid text (no lone surrogates)")
  .refine(
    (value) => Buffer.byteLength(value) <= MAX_SECRET_BYTES,
    `value must be at most ${MAX_SECRET_BYTES} bytes`,
  );

export const vaultSetInput = z.strictObject({ key: vaultKeyName, value: secretValue });
export type VaultSetInput = z.infer<typeof vaultSetInput>;

export const vaultKeyInput = z.strictObject({ key: vaultKeyName });

export const vaultListInput = z.strictObject({ prefix: storableText("prefix", 256).optional() });

/** A secret as the routes show it: its name and times, never its value. */
export const secretInfo = z.object({ key: z.string(), createdAt: z.string(), updatedAt: z.string() });
export const secretList = z.object({ keys: z.array(secretInfo), count: z.number() });

/** A secret decrypted (vault::get, for internal callers and admins): null when there is none. */
export const secretEntry = z.object({ key: z.string(), value: z.string() }).nullable();
