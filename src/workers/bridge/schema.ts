import { z } from "zod";
import { exceedsDepth } from "../../shared/json-depth.ts";
import { nextCursor } from "../../shared/outputs.ts";
import { pageFields } from "../../shared/pagination.ts";

export const RUNTIME_KINDS = ["process", "http", "claude_code", "codex", "cursor", "opencode"] as const;
export type RuntimeKind = (typeof RUNTIME_KINDS)[number];

export const RUN_STATUSES = [
  "running",
  "completed",
  "failed",
  "cancelled",
  "timed_out",
  "interrupted",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const DEFAULT_TIMEOUT_SECS = 300;

const text = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, `${field} is required`)
    .max(max, `${field} must be at most ${max} characters`);
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * A string the kernel passes to the program (its path, an argument, a variable, its directory): one
 * with a NUL could not be passed, and every invoke of the runtime failed after recording a run.
 */
const passed = <T extends z.ZodString>(schema: T, field: string) =>
  schema.refine((value) => !value.includes("\0"), `${field} must not contain NUL characters`);

export const registerInput = z
  .strictObject({
    kind: z.enum(RUNTIME_KINDS, { error: `kind must be one of ${RUNTIME_KINDS.join(", ")}` }),
    name: text("name", 200),
    /** The executable (process: required; coding tools: overrides the tool's usual name). */
    command: passed(text("command", 1024), "command").optional(),
    args: z
      .array(passed(z.string().max(10_000), "args"), { error: "args must be an array of strings" })
      .max(100)
      .optional(),
    url: text("url", 2048).optional(),
    headers: z.record(z.string(), z.string().max(8192)).optional(),
    env: z
      .record(
        z.string().regex(envName, "env names are letters, digits and _"),
        passed(z.string().max(32_768), "env values"),
      )
      .optional(),
    workDir: passed(text("workDir", 4096), "workDir").optional(),
    timeoutSecs: z
      .number({ error: "timeoutSecs must be an integer" })
      .int("timeoutSecs must be an integer")
      .min(1, "timeoutSecs must be at least 1")
      .max(86_400, "timeoutSecs must be at most 86400")
      .optional(),
    /** Realms whose keys (and agents, as a tool) may invoke it; the admin decides, none by default. */
    realms: z.array(text("realms", 256)).max(1000).optional(),
  })
  .superRefine((input, ctx) => {
    if (input.kind === "process" && !input.command) {
      ctx.addIssue({ code: "custom", path: ["command"], message: "a process runtime needs command" });
    }
    if (input.kind === "http" && !input.url) {
      ctx.addIssue({ code: "custom", path: ["url"], message: "an http runtime needs url" });
    }
    if (input.kind !== "http" && input.url) {
      ctx.addIssue({ code: "custom", path: ["url"], message: "url is for http runtimes" });
    }
  });
export type RegisterInput = z.output<typeof registerInput>;

export const runtimeRecord = z.object({
  id: z.string(),
  kind: z.enum(RUNTIME_KINDS),
  name: z.string(),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  url: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional().describe("Values shown to admin keys only"),
  env: z.record(z.string(), z.string()).optional().describe("Values shown to admin keys only"),
  workDir: z.string().optional(),
  timeoutSecs: z.number(),
  realms: z.array(z.string()).optional(),
  createdAt: z.string(),
});
export type Runtime = z.infer<typeof runtimeRecord>;

/** The most the prompt and the context may take, in bytes (the kernel's 128 KiB a string, with room). */
export const MAX_PASSED_BYTES = 120_000;
/** The deepest context a caller may pass, as the HTTP body's limit. */
const MAX_CONTEXT_DEPTH = 64;

export const invokeInput = z
  .strictObject({
    runtimeId: text("runtimeId", 256),
    agentId: text("agentId", 256).optional(),
    context: z.unknown().optional(),
    prompt: z
      .string({ error: "prompt must be a string" })
      // A coding CLI reads an argument that begins with "-" as an option of its own (--mcp-config=…,
      // --dangerously-skip-permissions): a prompt may not be one.
      .refine(
        (prompt) => !prompt.startsWith("-"),
        'prompt must not begin with "-" (a CLI would read it as an option)',
      )
      .refine((prompt) => !prompt.includes("\0"), "prompt must not contain NUL characters")
      .optional(),
  })
  .superRefine(({ context, prompt }, ctx) => {
    // An agent's tool call reaches here without the HTTP body's depth limit: measured first, since
    // serializing thousands of levels overflows the stack.
    if (exceedsDepth(context, MAX_CONTEXT_DEPTH)) {
      ctx.addIssue({
        code: "custom",
        path: ["context"],
        message: `context must nest at most ${MAX_CONTEXT_DEPTH} levels`,
      });
      return;
    }
    // Both reach the program through the kernel (together in AGENTOS_CONTEXT, the prompt also as an
    // argument), which takes at most 128 KiB a string: past that the start fails (E2BIG).
    const passedBytes = Buffer.byteLength(
      JSON.stringify({ context: context ?? null, prompt: prompt ?? null }),
    );
    if (passedBytes > MAX_PASSED_BYTES) {
      ctx.addIssue({
        code: "custom",
        path: ["context"],
        message: `context and prompt together must be at most ${MAX_PASSED_BYTES} bytes as JSON`,
      });
    }
  });
export type InvokeInput = z.output<typeof invokeInput>;

export const runIdInput = z.strictObject({ runId: text("runId", 256) });
export const runsInput = z.strictObject({ runtimeId: text("runtimeId", 256).optional(), ...pageFields });
export const purgeRealmInput = z.strictObject({ realmId: text("realmId", 256) });
export const listInput = z.strictObject({});

export const bridgeRun = z.object({
  id: z.string(),
  runtimeId: z.string(),
  kind: z.enum(RUNTIME_KINDS),
  agentId: z.string().nullable(),
  /** The realm of the key that invoked it (admin keys: none). */
  realmId: z.string().nullable(),
  status: z.enum(RUN_STATUSES),
  output: z.unknown(),
  error: z.string().nullable(),
  exitCode: z.number().nullable(),
  /** The child's pid, which is also its process group id. */
  pid: z.number().nullable(),
  truncated: z.boolean(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
});
export type BridgeRun = z.infer<typeof bridgeRun>;

export const runtimePage = z.object({ runtimes: z.array(runtimeRecord), count: z.number() });
export const runPage = z.object({ runs: z.array(bridgeRun), nextCursor });
export const invokeStarted = z.object({ runId: z.string(), status: z.enum(RUN_STATUSES) });
