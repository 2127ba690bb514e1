import { z } from "zod";
import type { Principal } from "../../engine/types.ts";
import { nextCursor, principalRecord } from "../../shared/outputs.ts";
import { pageFields } from "../../shared/pagination.ts";
import { queryInt } from "../../shared/query-int.ts";

export const stepModes = ["sequential", "fanout", "collect", "conditional", "loop"] as const;
export const errorModes = ["fail", "skip", "retry"] as const;

const name = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, `${field} is required`)
    .max(max);

export const stepSchema = z
  .strictObject({
    name: name("name", 200),
    functionId: name("functionId", 256).regex(/^[A-Za-z0-9_.\-:]+$/, "functionId must be a function id"),
    mode: z.enum(stepModes, { error: `mode must be one of ${stepModes.join(", ")}` }).default("sequential"),
    promptTemplate: z.string().max(100_000).optional(),
    timeoutMs: z.number().int().min(1, "timeoutMs must be a positive integer").max(3_600_000).optional(),
    errorMode: z
      .enum(errorModes, { error: `errorMode must be one of ${errorModes.join(", ")}` })
      .default("fail"),
    maxRetries: z.number().int().min(0, "maxRetries must be 0 or more").max(20).default(3),
    outputVar: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "outputVar must be a variable name (letters, digits, _)")
      .max(100)
      // `run` holds the run's own input (`{{run.input}}`): a step's output must not hide it. Assigning
      // `__proto__` would replace the variables' prototype instead of setting a variable.
      .refine(
        (value) => !["input", "__fanout", "run", "__proto__"].includes(value),
        "outputVar cannot be input, run, __fanout or __proto__",
      )
      .optional(),
    condition: z.string().max(10_000).optional(),
    maxIterations: z
      .number()
      .int()
      .min(1, "maxIterations must be at least 1")
      .max(1000, "maxIterations must be at most 1000")
      .default(10),
    until: z.string().max(10_000).optional(),
    /**
     * The function's payload: string leaves are templates over the run's variables (a leaf that is one
     * whole template keeps the value's type). Without it, the payload of DESIGN §6.
     */
    args: z.record(z.string(), z.unknown(), { error: "args must be an object" }).optional(),
    /** The agent an `agent::chat` step talks to (else the run's `agentId`). */
    agentId: z.string().min(1, "agentId must not be empty").max(256).optional(),
    /** The function may be missing at create (a remote worker that connects later). */
    optional: z.boolean({ error: "optional must be true or false" }).optional(),
  })
  .superRefine((step, ctx) => {
    if (step.mode === "conditional" && step.condition === undefined) {
      ctx.addIssue({ code: "custom", path: ["condition"], message: "a conditional step needs condition" });
    }
  });
export type Step = z.infer<typeof stepSchema>;

/** A whole definition stays small, so a page of a realm's workflows does too. */
export const MAX_STEPS_BYTES = 256 * 1024;

const realmIdField = z
  .string({ error: "realmId must be a string" })
  .min(1, "realmId is required")
  .max(200)
  .regex(/^[A-Za-z0-9_.:-]+$/, "realmId must be a realm id (letters, digits, _ . : -)");
const workflowId = z
  .string({ error: "id must be a string" })
  .min(1, "id is required")
  .regex(/^[A-Za-z0-9_.-]+$/, "id must use letters, digits, _ . -")
  // `.` and `..` are path segments to every URL resolver: /api/workflows/.. would be another route.
  .refine((id) => !/^\.+$/.test(id), "id must not be only dots")
  .max(200);
const steps = z
  .array(stepSchema)
  .min(1, "steps must not be empty")
  .max(500)
  .refine(
    (value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_STEPS_BYTES,
    `steps must be at most ${MAX_STEPS_BYTES} bytes as JSON`,
  );

/** Step names are unique within a workflow (results and errors name steps). */
function uniqueStepNames(value: { steps?: Step[] }, ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  value.steps?.forEach((step, index) => {
    const first = seen.get(step.name);
    if (first !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["steps", index, "name"],
        message: `duplicate step name "${step.name}" (also step ${first})`,
      });
    } else seen.set(step.name, index);
  });
}

export const workflowInput = z
  .strictObject({
    id: workflowId.optional(),
    realmId: realmIdField.optional(),
    name: name("name", 200),
    description: z.string().max(4000).optional(),
    steps,
  })
  .superRefine(uniqueStepNames);
export type WorkflowInput = z.infer<typeof workflowInput>;

/** An explicit update: only the fields given change; `expectedVersion` makes it a compare-and-swap. */
export const updateInput = z
  .strictObject({
    id: workflowId,
    realmId: realmIdField.optional(),
    name: name("name", 200).optional(),
    description: z.string().max(4000).optional(),
    steps: steps.optional(),
    expectedVersion: z.number().int().min(1, "expectedVersion must be a positive integer").optional(),
  })
  .superRefine(uniqueStepNames);
export type UpdateInput = z.infer<typeof updateInput>;

export const workflowIdInput = z.strictObject({ id: workflowId, realmId: realmIdField.optional() });

/**
 * Who wrote a workflow: a run never has more rights than its author had. `realm` authors confine every
 * run to their realm; `admin` and `system` authors leave the caller's own rights in force.
 */
export type WorkflowAuthor =
  | { kind: "system" }
  | { kind: "admin"; keyId: string }
  | { kind: "realm"; keyId: string; realmId: string };

export const workflowRecord = z.object({
  id: z.string(),
  realmId: z.string(),
  name: z.string(),
  description: z.string().optional(),
  steps: z.array(stepSchema),
  /** 1 at create, +1 on every update. */
  version: z.number(),
  author: principalRecord,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Workflow = z.infer<typeof workflowRecord>;

export const runInput = z.strictObject({
  workflowId: name("workflowId", 200),
  realmId: realmIdField.optional(),
  input: z.unknown().optional(),
  agentId: z.string().min(1).max(256).optional(),
  /** true: answer 202 {runId, status} at once and run in the background. */
  async: z.boolean({ error: "async must be true or false" }).optional(),
});

export const runsInput = z.strictObject({
  id: name("id", 200),
  realmId: realmIdField.optional(),
  limit: queryInt("limit", 1, 100).default(20),
  offset: queryInt("offset", 0).default(0),
});

export const runIdInput = z.strictObject({ runId: name("runId", 200) });
export const listInput = z.strictObject({ realmId: realmIdField.optional(), ...pageFields });
export const purgeInput = z.strictObject({ realmId: realmIdField });

export const stepResult = z.object({
  stepName: z.string(),
  output: z.unknown(),
  durationMs: z.number(),
  error: z.string().optional(),
  skipped: z.literal(true).optional(),
});
export type StepResult = z.infer<typeof stepResult>;

export const runStatuses = ["running", "completed", "failed", "interrupted", "cancelled"] as const;
export type RunStatus = (typeof runStatuses)[number];

export const runRecord = z.object({
  runId: z.string(),
  workflowId: z.string(),
  /** The workflow's version when the run started: a retry needs the same one. */
  workflowVersion: z.number().optional(),
  /** The workflow's realm (runs of records written before realms had none: the default realm). */
  realmId: z.string().optional(),
  /** The rights its steps run with: the caller's, never more than the workflow's author had. */
  principal: principalRecord.optional(),
  status: z.enum(runStatuses),
  input: z.unknown(),
  agentId: z.string().optional(),
  results: z.array(stepResult),
  vars: z.record(z.string(), z.unknown()),
  /** The index of the next step to run: the checkpoint a restart resumes from. */
  position: z.number(),
  error: z.string().optional(),
  /** The step a failed or interrupted run stopped at. */
  stoppedAt: z.string().optional(),
  startedAt: z.string(),
  finishedAt: z.string().optional(),
  failedAt: z.string().optional(),
  /** Cluster mode: the node running it and when it last said so (a stale lease means it died). */
  owner: z.string().optional(),
  heartbeatAt: z.string().optional(),
  /** Cluster mode: until when the owner holds the run; a live node takes over a run whose lease lapsed. */
  leaseUntil: z.string().optional(),
  /** Cluster mode: the owner's lease length; another node waits this long without a renewal to take over. */
  leaseMs: z.number().optional(),
  /** Set by a cancel the run's own node did not receive: the owner stops at its next checkpoint. */
  cancelRequested: z.literal(true).optional(),
  /** How many times the run was retried after it failed, was interrupted or cancelled. */
  retries: z.number().optional(),
  /** The workflows whose steps started this run, outermost first (absent for a run started directly). */
  chain: z.array(z.string()).optional(),
});
export type Run = z.infer<typeof runRecord>;

/** What the workflow routes answer besides workflows and runs themselves. */
export const workflowCreated = z.object({ id: z.string(), realmId: z.string(), version: z.number() });
export const workflowWithMissing = workflowRecord.extend({
  missingFunctions: z.array(z.string()).describe("Functions of optional steps that are not registered now"),
});
export const workflowDeleted = z.object({ deleted: z.boolean(), id: z.string(), realmId: z.string() });
export const workflowPage = z.object({ workflows: z.array(workflowRecord), nextCursor });
export const runStarted = z.union([
  z.object({
    runId: z.string(),
    status: z.enum(runStatuses),
    results: z.array(stepResult),
    vars: z.record(z.string(), z.unknown()),
  }),
  z.object({ runId: z.string(), status: z.enum(runStatuses), workflowId: z.string(), realmId: z.string() }),
]);
export const runSummary = z.object({
  runId: z.string(),
  workflowId: z.string(),
  realmId: z.string(),
  status: z.enum(runStatuses),
  position: z.number(),
  completedSteps: z.number(),
  stoppedAt: z.string().optional(),
  error: z.string().optional(),
  cancelRequested: z.literal(true).optional(),
  retries: z.number().optional(),
});
export const runPage = z.object({
  runs: z.array(runRecord),
  total: z.number(),
  limit: z.number(),
  offset: z.number(),
});

/** What workflow::load_files did with a directory's workflows/*.yaml, and each file it could not load. */
export const filesLoaded = z.object({
  loaded: z.array(z.string()),
  unchanged: z.array(z.string()),
  problems: z.array(z.object({ file: z.string(), message: z.string() })),
});

export const filesChecked = z.object({
  workflows: z.array(z.object({ id: z.string(), file: z.string() })),
  problems: z.array(z.object({ file: z.string(), message: z.string() })),
});

export type RunPrincipal = Exclude<Principal, { kind: "anonymous" }>;
