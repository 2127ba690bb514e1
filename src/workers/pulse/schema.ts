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

export interface PulseConfig {
  agentId: string;
  realmId: string;
  cron: string;
  enabled: boolean;
  contextMode: ContextMode;
  contextGraph?: boolean;
  wakeOn?: "always" | "changes";
  timeoutSecs?: number;
  maxRetries?: number;
  createdAt: string;
  updatedAt: string;
}

export type RunSource = "cron" | "manual";

export interface PulseRun {
  id: string;
  agentId: string;
  realmId: string;
  status: "Running" | "Completed" | "Failed";
  source: RunSource;
  contextSnapshot: Record<string, unknown>;
  startedAt: string;
  /** Calls of agent::chat made so far (1 + retries). */
  attempts: number;
  finishedAt?: string;
  /** The agent's reply, truncated to OUTPUT_LIMIT characters. */
  output?: string;
  error?: string;
}

export type SkipReason =
  | "not_registered"
  /** The realm is gone (realm::get answered 404): the pulse was retired. */
  | "realm_deleted"
  /** The agent is gone (agent::get answered 404): the pulse was retired. */
  | "agent_deleted"
  | "disabled"
  | "realm_paused"
  | "realm_archived"
  | "budget_exceeded"
  | "already_running"
  /** wakeOn "changes": nothing the agent can see changed since its last run; no model call. */
  | "no_changes";

export interface Skipped {
  skipped: true;
  reason: SkipReason;
}

/** Why an agent did (or did not) wake on its latest tick: shown by status. */
export interface LastTick {
  at: string;
  outcome: "ran" | "skipped";
  reason?: SkipReason;
  runId?: string;
  /** The tick's scheduled second, as the cron scheduler named it. */
  scheduledTime?: string;
}
