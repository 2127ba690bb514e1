import { z } from "zod";

/**
 * Limits of free-form fields, in one place (README, HTTP contract). They keep each record, and so each
 * page of a listing, small: a list of 500 agents stays a few megabytes, not hundreds.
 */
export const MAX_METADATA_BYTES = 16 * 1024;
/** Extra context a caller hands one agent turn (it goes into the model prompt). */
export const MAX_TURN_CONTEXT_BYTES = 64 * 1024;

/** A JSON object of at most `maxBytes` once serialized: 400 naming `field` and the limit. */
export function boundedJsonObject(field: string, maxBytes: number) {
  return z
    .record(z.string(), z.unknown(), { error: `${field} must be a JSON object` })
    .refine(
      (value) => Buffer.byteLength(JSON.stringify(value) ?? "") <= maxBytes,
      `${field} must be at most ${maxBytes} bytes as JSON`,
    );
}
