import type { TriggerFn } from "../../engine/types.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import { returnsSecret } from "../../shared/internal-functions.ts";
import type { Run, Step, StepResult, Workflow } from "./schema.ts";
import { asText, outputContains, renderTemplate } from "./templates.ts";

export type RunEvent = "started" | "step_completed" | "completed" | "failed";

export interface ExecutorDeps {
  trigger: TriggerFn;
  /** Persists the run: called after every step, so a restart resumes from there. */
  checkpoint(run: Run): Promise<void>;
  publish(event: RunEvent, run: Run, step?: StepResult): void;
  /** Wait before retry number `attempt` (0-based): exponential backoff. */
  retryDelayMs(attempt: number): number;
  /** The input fields a function accepts, when it declares them (strict functions refuse others). */
  inputFields(functionId: string): Promise<string[] | undefined>;
}

/** Thrown when a step fails the run (errorMode fail, or retry exhausted). */
export class StepFailure extends Error {
  readonly step: string;
  constructor(step: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.step = step;
  }
}

/**
 * Runs the workflow from the run's checkpoint (`position`) to the end, per the specification's modes:
 * sequential, fanout batches (consecutive fanout steps in parallel), collect, conditional and loop. The
 * run is checkpointed after every step; a failing step marks it failed and rethrows.
 */
export async function executeRun(deps: ExecutorDeps, workflow: Workflow, run: Run): Promise<Run> {
  const { steps } = workflow;
  try {
    while (run.position < steps.length) {
      const step = steps[run.position] as Step;
      if (step.mode === "fanout") {
        const batch = fanoutBatch(steps, run.position);
        const results = await Promise.all(batch.map((member) => runStep(deps, run, member, {})));
        run.vars.__fanout = results.map((result) => result.output);
        for (const [index, member] of batch.entries()) setOutputVar(run, member, results[index]?.output);
        await complete(deps, run, results, batch.length);
        continue;
      }
      await complete(deps, run, [await runByMode(deps, run, step)], 1);
    }
    run.status = "completed";
    run.finishedAt = nowIso();
    await deps.checkpoint(run);
    deps.publish("completed", run);
    return run;
  } catch (error) {
    if (!(error instanceof StepFailure)) throw error;
    run.status = "failed";
    run.error = `Step "${error.step}" failed: ${error.message}`;
    run.stoppedAt = error.step;
    run.failedAt = nowIso();
    run.finishedAt = run.failedAt;
    await deps.checkpoint(run);
    deps.publish("failed", run);
    throw new AppError("unprocessable", `Workflow ${workflow.id} run ${run.runId}: ${run.error}`, {
      reason: "workflow_failed",
      cause: error,
    });
  }
}

function fanoutBatch(steps: Step[], from: number): Step[] {
  const batch: Step[] = [];
  for (let i = from; i < steps.length && steps[i]?.mode === "fanout"; i++) batch.push(steps[i] as Step);
  return batch;
}

async function complete(deps: ExecutorDeps, run: Run, results: StepResult[], advance: number): Promise<void> {
  run.results.push(...results);
  run.position += advance;
  await deps.checkpoint(run);
  for (const result of results) deps.publish("step_completed", run, result);
}

async function runByMode(deps: ExecutorDeps, run: Run, step: Step): Promise<StepResult> {
  if (step.mode === "conditional" && !outputContains(run.vars.input, step.condition ?? "")) {
    return { stepName: step.name, output: null, skipped: true, durationMs: 0 };
  }
  if (step.mode === "loop") return runLoop(deps, run, step);
  const extra = step.mode === "collect" ? { fanoutResults: run.vars.__fanout ?? [] } : {};
  const result = await runStep(deps, run, step, extra);
  advance(run, step, result.output);
  return result;
}

/** Repeats the step, feeding each output to the next pass, until `until` appears or the bound is hit. */
async function runLoop(deps: ExecutorDeps, run: Run, step: Step): Promise<StepResult> {
  const started = nowMs();
  let last: StepResult = { stepName: step.name, output: null, durationMs: 0 };
  for (let iteration = 1; iteration <= step.maxIterations; iteration++) {
    last = await runStep(deps, run, step, { iteration });
    advance(run, step, last.output);
    if (last.error !== undefined) break;
    if (step.until !== undefined && outputContains(last.output, step.until)) break;
  }
  return { ...last, durationMs: nowMs() - started };
}

/** The output becomes the next step's input and, when named, a variable. */
function advance(run: Run, step: Step, output: unknown): void {
  run.vars.input = output;
  setOutputVar(run, step, output);
}

function setOutputVar(run: Run, step: Step, output: unknown): void {
  if (step.outputVar) run.vars[step.outputVar] = output;
}

/**
 * One call of the step's function, with its error mode: `retry` tries 1 + maxRetries times with
 * exponential backoff, `skip` records the error and yields null, `fail` (and an exhausted retry) fails the run.
 */
async function runStep(
  deps: ExecutorDeps,
  run: Run,
  step: Step,
  extra: Record<string, unknown>,
): Promise<StepResult> {
  const started = nowMs();
  const payload = await stepPayload(deps, run, step, extra);
  const attempts = step.errorMode === "retry" ? 1 + step.maxRetries : 1;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, deps.retryDelayMs(attempt - 1)));
    try {
      const output = await deps.trigger({
        function_id: step.functionId,
        payload,
        timeout_ms: step.timeoutMs,
        auth: run.principal,
      });
      // A secret (a new key, a vault value) would be stored in the run: it never leaves the step.
      const kept = returnsSecret(step.functionId)
        ? `[redacted: ${step.functionId} returns a secret]`
        : output;
      return { stepName: step.name, output: kept ?? null, durationMs: nowMs() - started };
    } catch (error) {
      lastError = error;
    }
  }
  if (step.errorMode === "skip") {
    return { stepName: step.name, output: null, durationMs: nowMs() - started, error: messageOf(lastError) };
  }
  throw new StepFailure(step.name, lastError);
}

/**
 * DESIGN §6: `{...vars, input, prompt, message: prompt, agentId}` (+ `iteration`, `fanoutResults`). A
 * function that declares its input fields gets only those, so strict functions (agent::chat, tools)
 * work as steps.
 */
async function stepPayload(deps: ExecutorDeps, run: Run, step: Step, extra: Record<string, unknown>) {
  const vars = { ...run.vars, input: run.vars.input };
  const prompt =
    step.promptTemplate === undefined ? asText(vars.input) : renderTemplate(step.promptTemplate, vars);
  const full: Record<string, unknown> = { ...vars, prompt, message: prompt, ...extra };
  if (run.agentId) full.agentId = run.agentId;
  const fields = await deps.inputFields(step.functionId);
  if (!fields) return full;
  return Object.fromEntries(Object.entries(full).filter(([key]) => fields.includes(key)));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
