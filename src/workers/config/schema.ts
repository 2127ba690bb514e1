import { z } from "zod";

const name = z
  .string({ error: "must be a string" })
  .trim()
  .min(1, "must not be empty")
  .max(200, "must be at most 200 characters");

/** `agents/<name>/agent.toml` (the fields may also sit in an `[agent]` table). */
export const agentFile = z.strictObject({
  name: name.optional(),
  description: z.string().max(4000).optional(),
  model: z.string().min(1).max(256).optional(),
  /** The agent's embedding model (a catalog id, an alias or `<provider>/<model>`); checked as the API checks it. */
  embedding_model: z.string().trim().min(1, "must not be empty").max(512).optional(),
  system_prompt: z.string().max(32_768).optional(),
  tool_profile: z.enum(["chat", "code", "research", "ops", "data", "full"]).optional(),
  tools: z.array(z.string().min(1).max(256)).max(100).optional(),
  capabilities: z.array(z.string().min(1).max(256)).max(100).optional(),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().min(1).max(1_000_000).optional(),
  realm: z.string().min(1).max(256).optional(),
});
export type AgentFile = z.infer<typeof agentFile>;

/** Field names that would hold a secret: a channel file names vault entries instead. */
const SECRET_FIELD = /(token|secret|password|api_key|private_key)$/i;

/** `config/channels/<name>.toml`: a platform channel bound to an agent of these files (by name). */
export const channelFile = z
  .unknown()
  .superRefine((data, ctx) => {
    if (typeof data !== "object" || data === null) return;
    for (const key of Object.keys(data)) {
      if (SECRET_FIELD.test(key)) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: "secrets are never written in a file: store it in the vault and name it under [secrets]",
        });
      }
    }
  })
  .pipe(
    z.strictObject({
      platform: z.string().regex(/^[a-z0-9_-]{1,64}$/, "must be a platform name such as slack"),
      channel_id: name,
      agent: name,
      realm: z.string().min(1).max(256).optional(),
      /** Vault names of the secrets this channel uses (for the operator to see what to set). */
      secrets: z
        .record(z.string(), z.string().regex(/^channel:/, "must be a vault name starting with channel:"))
        .optional(),
    }),
  );
export type ChannelFile = z.output<typeof channelFile>;

/**
 * `hands/<name>/HAND.toml`: a schedule for a declared agent. With `steps` (`[[steps]]`: name, agent, task),
 * a workflow `hand-<name>` of those agents' turns runs at each time; with `task` alone, the agent receives
 * the task (a scheduled job, as `tool::cron_create` makes; 5 or 6 cron fields, UTC); with neither, it is
 * the agent's pulse (six-field cron), which wakes it with its context.
 */
export const handFile = z.strictObject({
  name: name.optional(),
  agent: name,
  schedule: z.string().trim().min(1, "must not be empty").max(200),
  task: z.string().trim().min(1).max(8000).optional(),
  realm: z.string().min(1).max(256).optional(),
  /** Steps make the hand a workflow run at each time (`task` is then the run's input). */
  steps: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 letters, digits, _ or -"),
        agent: name,
        task: z.string().trim().min(1, "must not be empty").max(8000),
      }),
    )
    .min(1, "must name at least one step")
    .max(20)
    .optional(),
});
export type HandFile = z.infer<typeof handFile>;

/** What the config routes answer. */
const fileProblem = z.object({ file: z.string(), message: z.string() });
const names = z.array(z.string());
export const reloadReport = z.object({
  agents: z.object({ created: names, updated: names, unchanged: names }),
  channels: z.object({ bound: names }),
  hands: z.object({ scheduled: names, unchanged: names }),
  integrations: z
    .object({ connected: names, unchanged: names, pending: names, removed: names })
    .partial()
    .describe("Empty when the integrations could not be read (see problems)"),
  workflows: z.object({ loaded: names, unchanged: names }),
  problems: z.array(fileProblem).describe("Each file that could not be applied, and why"),
});
export const validateReport = z.object({
  agents: names,
  channels: names,
  hands: names,
  integrations: names,
  workflows: names,
  problems: z.array(fileProblem),
});
