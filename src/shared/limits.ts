import { z } from "zod";

/**
 * Limits of free-form fields, in one place (README, HTTP contract). They keep each record, and so each
 * page of a listing, small: a list of 500 agents stays a few megabytes, not hundreds.
 */
export const MAX_METADATA_BYTES = 16 * 1024;
/**
 * Most characters of a session id a caller names. Its messages are kept in the state scope
 * `agent_messages:<agentId>:<sessionId>`, which holds at most 256 characters (58 taken by the prefix and
 * an agent id): a longer id was refused by the store only after the model had answered (and been paid),
 * with the turn's memories already kept and the session not. Checked before anything runs.
 */
export const MAX_SESSION_ID_LENGTH = 192;
/** Most bytes (UTF-8) of one memory entry's content. */
export const MAX_MEMORY_CONTENT_BYTES = 32 * 1024;
/**
 * Default of AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT: room for the benchmark's 1 000 000 entries of one
 * agent (bench/memory-scale.ts) and the turns it runs after.
 */
export const DEFAULT_MEMORY_MAX_ENTRIES_PER_AGENT = 2_000_000;
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
