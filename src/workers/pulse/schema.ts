import { z } from "zod";
import { queryInt } from "../../shared/query-int.ts";

/**
 * Realm and agent ids become parts of state keys (`<realmId>/<agentId>`), so they may not contain a
 * slash or whitespace: that keeps one realm's keys a clean prefix of the scope.
 */
const idField = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, `${field} is required`)
    .max(256, `${field} must be at most 256 characters`)
    .regex(/^[^/\s]+$/, `${field} must not contain '/' or whitespace`);

/** Both spellings of the spec are accepted; the stored (and returned) value is `Thin` or `Full`. */
const contextMode = z
  .enum(["Thin", "Full", "thin", "full"], { error: "contextMode must be Thin or Full" })
  .transform((mode) => (mode.toLowerCase() === "full" ? "Full" : "Thin"));

export type ContextMode = "Thin" | "Full";

const target = { realmId: idField("realmId"), agentId: idField("agentId") };

export const registerInput = z.strictObject({
  ...target,
  cron: z
    .string({ error: "cron must be a string" })
    .trim()
    .min(1, "cron is required")
    .max(256, "cron must be at most 256 characters"),
  contextMode: contextMode.default("Thin"),
  /** With Full: the context adds the agent's knowledge-graph neighbourhood of its active missions. */
  contextGraph: z.boolean({ error: "contextGraph must be true or false" }).default(false),
  /** "changes": a tick skips the model when nothing the agent can see changed since its last run. */
  wakeOn: z.enum(["always", "changes"], { error: "wakeOn must be always or changes" }).default("always"),
  timeoutSecs: z
    .number({ error: "timeoutSecs must be a number" })
    .int("timeoutSecs must be an integer")
    .min(1, "timeoutSecs must be between 1 and 3600")
    .max(3600, "timeoutSecs must be between 1 and 3600")
    .optional(),
  maxRetries: z
    .number({ error: "maxRetries must be a number" })
    .int("maxRetries must be an integer")
    .min(0, "maxRetries must be between 0 and 10")
    .max(10, "maxRetries must be between 0 and 10")
    .optional(),
});
export type RegisterInput = z.infer<typeof registerInput>;

export const toggleInput = z.strictObject({
  ...target,
  enabled: z.boolean({ error: "enabled must be a boolean (true or false)" }),
});

export const invokeInput = z.strictObject({ ...target, contextMode: contextMode.optional() });

export const statusInput = z.strictObject({
  ...target,
  limit: queryInt("limit", 1, 100).default(20),
});

/** Cron ticks carry the trigger's data plus the scheduler's own fields (trigger, job_id, times). */
export const tickInput = z.looseObject({ ...target, job_id: z.string().optional() });

export const targetInput = z.strictObject(target);
export const realmInput = z.strictObject({ realmId: idField("realmId") });

export const pulseConfig = z.object({
  agentId: z.string(),
  realmId: z.string(),
  cron: z.string(),
  enabled: z.boolean(),
  contextMode: z.enum(["Thin", "Full"]),
  contextGraph: z.boolean().optional(),
  wakeOn: z.enum(["always", "changes"]).optional(),
  timeoutSecs: z.number().optional(),
  maxRetries: z.number().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type PulseConfig = z.infer<typeof pulseConfig>;

export type RunSource = "cron" | "manual";

export const pulseRun = z.object({
  id: z.string(),
  agentId: z.string(),
  realmId: z.string(),
  status: z.enum(["Running", "Completed", "Failed"]),
  source: z.enum(["cron", "manual"]),
  contextSnapshot: z.record(z.string(), z.unknown()),
  startedAt: z.string(),
  /** Calls of agent::chat made so far (1 + retries). */
  attempts: z.number(),
  finishedAt: z.string().optional(),
  /** The agent's reply, truncated to OUTPUT_LIMIT characters. */
  output: z.string().optional(),
  error: z.string().optional(),
});
export type PulseRun = z.infer<typeof pulseRun>;

export const SKIP_REASONS = [
  "not_registered",
  /** The realm is gone (realm::get answered 404): the pulse was retired. */
  "realm_deleted",
  /** The agent is gone (agent::get answered 404): the pulse was retired. */
  "agent_deleted",
  "disabled",
  "realm_paused",
  "realm_archived",
  "budget_exceeded",
  "already_running",
  /** The realm's share of cron runs at once on this node (AGENTOS_PULSE_RUNS_PER_REALM) is taken. */
  "realm_busy",
  /** wakeOn "changes": nothing the agent can see changed since its last run; no model call. */
  "no_changes",
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface Skipped {
  skipped: true;
  reason: SkipReason;
}

/** Why an agent did (or did not) wake on its latest tick: shown by status. */
export const lastTick = z.object({
  at: z.string(),
  outcome: z.enum(["ran", "skipped"]),
  reason: z.enum(SKIP_REASONS).optional(),
  runId: z.string().optional(),
  /** The tick's scheduled second, as the cron scheduler named it. */
  scheduledTime: z.string().optional(),
});
export type LastTick = z.infer<typeof lastTick>;

export const pulseStatus = z.object({
  config: pulseConfig.nullable().describe("null: the agent has no pulse"),
  recentRuns: z.array(pulseRun).describe("Newest first"),
  lastTick: lastTick.nullable(),
  nextFireAt: z.string().nullable().describe("When the pulse fires next (UTC); null when disabled"),
});
