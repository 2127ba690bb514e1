import { agentPrincipal } from "../../engine/acting-agent.ts";
import type { Principal, TriggerFn } from "../../engine/types.ts";
import { DEFAULT_REALM_ID } from "../../shared/access.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { AppError, isAppError } from "../../shared/errors.ts";
import { returnsSecret } from "../../shared/internal-functions.ts";
import { asText, outputContains, renderArgs, renderTemplate } from "../../shared/templates.ts";
import { chainMetadata, inStepOf } from "./nesting.ts";
import type { Run, Step, StepResult, Workflow } from "./schema.ts";

export type RunEvent = "started" | "step_completed" | "completed" | "failed" | "cancelled";

export interface ExecutorDeps {
  trigger: TriggerFn;
  /** Persists the run: called after every step, so a restart resumes from there. */
  checkpoint(run: Run): Promise<void>;
  publish(event: RunEvent, run: Run, step?: StepResult): void;
  /** Wait before retry number `attempt` (0-based): exponential backoff. */
  retryDelayMs(attempt: number): number;
  /** The input fields a function accepts, when it declares them (strict functions refuse others). */
  inputFields(functionId: string): Promise<string[] | undefined>;
  /**
   * True once this process is shutting down: a run stops before its next step (its last one is
   * checkpointed), so it can be handed to another node, and resolves still `running`.
   */
  handingOver?(): boolean;
}

/** The run was cancelled: by its signal here, or (cluster mode) by a flag its checkpoint found. */
export class RunCancelled extends Error {
  constructor() {
    super("cancelled");
    this.name = "RunCancelled";
  }
}

/** The process shuts down: the run stops between two steps, its record as its last checkpoint left it. */
class RunHandedOver extends Error {}

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
 * run is checkpointed after every step; a failing step marks it failed and rethrows. `signal` cancels
 * it: the running step's invocation is aborted and the run ends `cancelled` at that step. On shutdown
 * (`handingOver`) it resolves still `running` before the next step, for another node to continue.
 */
export async function executeRun(
  deps: ExecutorDeps,
  workflow: Workflow,
  run: Run,
  signal?: AbortSignal,
): Promise<Run> {
  const { steps } = workflow;
  const call: StepCall = { deps, run, signal };
  try {
    while (run.position < steps.length) {
      if (signal?.aborted) throw new RunCancelled();
      // Only here, between steps: a loop's passes or a step's retries are not checkpointed apart.
      if (deps.handingOver?.()) throw new RunHandedOver();
      const step = steps[run.position] as Step;
      // The variables as stored: what a step whose output cannot be stored is undone to.
      const stored = { ...run.vars };
      if (step.mode === "fanout") {
        const batch = fanoutBatch(steps, run.position);
        const results = await runBatch(call, batch);
        run.vars.__fanout = results.map((result) => result.output);
        for (const [index, member] of batch.entries()) setOutputVar(run, member, results[index]?.output);
        await complete(deps, run, { results, advance: batch.length, stored }, steps.length);
        continue;
      }
      await complete(deps, run, { results: [await runByMode(call, step)], advance: 1, stored }, steps.length);
    }
    if (run.status === "running") {
      // A workflow without steps: nothing was checkpointed since the start.
      run.status = "completed";
      run.finishedAt = nowIso();
      await deps.checkpoint(run);
    }
    deps.publish("completed", run);
    return run;
  } catch (error) {
    if (error instanceof RunCancelled) return stopCancelled(deps, workflow, run);
    if (error instanceof RunHandedOver) return run;
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

/** Ends a cancelled run where it stopped; a caller waiting for it gets a 409 saying so. */
async function stopCancelled(deps: ExecutorDeps, workflow: Workflow, run: Run): Promise<never> {
  const step = workflow.steps[run.position]?.name ?? `step ${run.position}`;
  run.status = "cancelled";
  run.stoppedAt = step;
  run.error = `Cancelled at step "${step}"`;
  run.finishedAt = nowIso();
  await deps.checkpoint(run);
  deps.publish("cancelled", run);
  throw new AppError("conflict", `Workflow ${workflow.id} run ${run.runId}: ${run.error}`, {
    reason: "cancelled",
  });
}

interface StepCall {
  deps: ExecutorDeps;
  run: Run;
  signal?: AbortSignal;
}

/**
 * Steps of one fanout batch running at once: a workflow of 500 fanout steps, started a hundred times,
 * would otherwise have 50 000 function calls going at the same moment.
 */
export const FANOUT_PARALLELISM = 16;

/**
 * A fanout batch's steps in parallel, at most FANOUT_PARALLELISM at a time, results in step order. One
 * that fails the run stops the others (those not started never start), and the failure waits for them:
 * a run recorded failed while a sibling still acted could be neither cancelled nor seen.
 */
async function runBatch(call: StepCall, batch: Step[]): Promise<StepResult[]> {
  const stop = new AbortController();
  const signal = call.signal ? AbortSignal.any([call.signal, stop.signal]) : stop.signal;
  const results = new Array<StepResult>(batch.length);
  const failures: unknown[] = [];
  let next = 0;
  const lane = async () => {
    while (next < batch.length && !signal.aborted) {
      const index = next++;
      try {
        results[index] = await runStep({ ...call, signal }, batch[index] as Step, {});
      } catch (error) {
        failures.push(error);
        stop.abort();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FANOUT_PARALLELISM, batch.length) }, lane));
  if (call.signal?.aborted) throw new RunCancelled();
  const failure = failures.find((reason) => !(reason instanceof RunCancelled)) ?? failures[0];
  if (failure !== undefined) throw failure;
  return results;
}

function fanoutBatch(steps: Step[], from: number): Step[] {
  const batch: Step[] = [];
  for (let i = from; i < steps.length && steps[i]?.mode === "fanout"; i++) batch.push(steps[i] as Step);
  return batch;
}

/** Steps that just finished: their results, how far they move the run, and its variables before them. */
interface Finished {
  results: StepResult[];
  advance: number;
  stored: Run["vars"];
}

/**
 * Records finished steps. The last ones complete the run in the same checkpoint (one write instead of
 * two for a short run); a crash before it resumes at those steps, as a crash before any step checkpoint.
 */
async function complete(deps: ExecutorDeps, run: Run, finished: Finished, length: number): Promise<void> {
  const { results, advance } = finished;
  run.results.push(...results);
  run.position += advance;
  const last = run.position >= length;
  if (last) {
    run.status = "completed";
    run.finishedAt = nowIso();
  }
  try {
    await deps.checkpoint(run);
  } catch (error) {
    if (last) {
      run.status = "running";
      delete run.finishedAt;
    }
    if (refusedValue(error)) throw unstorable(run, finished, error);
    throw error;
  }
  // Step events tell of a run still running, as when each step had a checkpoint of its own.
  const during = last ? { ...run, status: "running" as const } : run;
  for (const result of results) deps.publish("step_completed", during, result);
}

/**
 * The store refused a value (400), or it could not even be made into text: an output naming one large
 * value many times (args `{a: "{{page}}", b: "{{page}}", ...}` echoed back) is past V8's string limit.
 */
function refusedValue(error: unknown): error is Error {
  return (isAppError(error) && error.status === 400) || error instanceof RangeError;
}

/**
 * The store refused the checkpoint (a value too large, say a fetched page kept as input and outputVar):
 * the run would stay `running` and refuse again on every resume. The steps are undone and fail the run,
 * which is then stored as it was before them.
 */
function unstorable(run: Run, finished: Finished, error: Error): StepFailure {
  run.results.splice(run.results.length - finished.results.length);
  run.position -= finished.advance;
  run.vars = finished.stored;
  const cause = new AppError(
    "validation",
    `its output could not be stored with the run (${error.message}): a run keeps each step's output, as its result, the next step's input and its outputVar; return less, or pass a smaller part on`,
    { cause: error },
  );
  return new StepFailure(finished.results[0]?.stepName ?? `step ${run.position}`, cause);
}

async function runByMode(call: StepCall, step: Step): Promise<StepResult> {
  const { run } = call;
  if (step.mode === "conditional" && !outputContains(run.vars.input, step.condition ?? "")) {
    return { stepName: step.name, output: null, skipped: true, durationMs: 0 };
  }
  if (step.mode === "loop") return runLoop(call, step);
  const extra = step.mode === "collect" ? { fanoutResults: run.vars.__fanout ?? [] } : {};
  const result = await runStep(call, step, extra);
  advance(run, step, result.output);
  return result;
}

/** Repeats the step, feeding each output to the next pass, until `until` appears or the bound is hit. */
async function runLoop(call: StepCall, step: Step): Promise<StepResult> {
  const { run } = call;
  const started = nowMs();
  let last: StepResult = { stepName: step.name, output: null, durationMs: 0 };
  for (let iteration = 1; iteration <= step.maxIterations; iteration++) {
    if (call.signal?.aborted) throw new RunCancelled();
    last = await runStep(call, step, { iteration });
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
 * A cancel is never retried nor skipped.
 */
async function runStep(call: StepCall, step: Step, extra: Record<string, unknown>): Promise<StepResult> {
  const { deps, run, signal } = call;
  const started = nowMs();
  // A payload that cannot be built (a template rendering too much text) fails the run at this step.
  const payload = await stepPayload(deps, run, step, extra).catch((error: unknown) => {
    throw new StepFailure(step.name, error);
  });
  const attempts = step.errorMode === "retry" ? 1 + step.maxRetries : 1;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await pause(deps.retryDelayMs(attempt - 1), signal);
    if (signal?.aborted) throw new RunCancelled();
    try {
      // A workflow the step runs learns it is nested, and how deep: directly from the metadata, or
      // through what the step calls (an agent turn whose tool runs one) from the step's context.
      const output = await inStepOf(run, () =>
        deps.trigger({
          function_id: step.functionId,
          payload,
          timeout_ms: step.timeoutMs,
          auth: stepPrincipal(run, step),
          ...(step.functionId === "workflow::run" ? { metadata: chainMetadata(run) } : {}),
          signal,
        }),
      );
      // A secret (a new key, a vault value) would be stored in the run: it never leaves the step.
      const kept = returnsSecret(step.functionId)
        ? `[redacted: ${step.functionId} returns a secret]`
        : output;
      return { stepName: step.name, output: kept ?? null, durationMs: nowMs() - started };
    } catch (error) {
      if (signal?.aborted) throw new RunCancelled();
      lastError = refusalOf(step, payload, error);
    }
  }
  if (step.errorMode === "skip") {
    return { stepName: step.name, output: null, durationMs: nowMs() - started, error: messageOf(lastError) };
  }
  throw new StepFailure(step.name, lastError);
}

/**
 * Who a step runs as. A tool step of a run (or step) with an agent runs as that agent, so the agent's
 * tool policies hold (a risky call it marked `approval: "required"` waits for a decision) and the tool
 * acts in the agent's workspace with no more than the agent's realm; every other step runs with the run's
 * rights.
 */
function stepPrincipal(run: Run, step: Step): Principal | undefined {
  const agentId = step.agentId ?? run.agentId;
  if (!agentId || !runsAsAgent(step)) return run.principal;
  return agentPrincipal({ id: agentId, realmId: run.realmId ?? DEFAULT_REALM_ID });
}

/** A tool step runs as its agent (the step's, else the run's), when there is one. */
export const runsAsAgent = (step: Step): boolean => step.functionId.startsWith("tool::");

/** A function that refuses its payload (400) is told apart from one that failed doing its work. */
function refusalOf(step: Step, payload: Record<string, unknown>, error: unknown): unknown {
  if (!isAppError(error) || error.status !== 400) return error;
  const fields = Object.keys(payload).join(", ") || "none";
  const hint = step.args ? "" : ' (give the step "args" to choose its payload)';
  return new AppError(
    "validation",
    `${step.functionId} refused the step's payload {${fields}}: ${error.message}${hint}`,
    { cause: error },
  );
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * With `args`: those, rendered over the run's variables (and `run.input`), are the payload. Otherwise DESIGN §6:
 * `{...vars, input, prompt, message: prompt, agentId}` (+ `iteration`, `fanoutResults`), where a
 * function that declares its input fields gets only those, so strict functions (agent::chat, tools)
 * work as steps. `agentId` is the step's, else the run's.
 */
async function stepPayload(
  deps: ExecutorDeps,
  run: Run,
  step: Step,
  extra: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const agentId = step.agentId ?? run.agentId;
  const vars: Record<string, unknown> = { ...run.vars, input: run.vars.input };
  // Built only for steps with templates: every step pays for it otherwise, a no-op step mostly.
  const templateVars = () => ({ ...vars, ...extra, ...(agentId ? { agentId } : {}), ...runVariables(run) });
  if (step.args) {
    const args = renderArgs(step.args, templateVars()) as Record<string, unknown>;
    // A function that acts for an agent gets the step's (or run's) agent unless args name one.
    if (
      agentId &&
      args.agentId === undefined &&
      (await deps.inputFields(step.functionId))?.includes("agentId")
    ) {
      args.agentId = agentId;
    }
    return args;
  }
  const prompt =
    step.promptTemplate === undefined
      ? asText(vars.input)
      : renderTemplate(step.promptTemplate, templateVars());
  const full: Record<string, unknown> = { ...vars, prompt, message: prompt, ...extra };
  if (agentId) full.agentId = agentId;
  const fields = await deps.inputFields(step.functionId);
  if (!fields) return full;
  return Object.fromEntries(Object.entries(full).filter(([key]) => fields.includes(key)));
}

/**
 * `{{run.input}}`: the run's own input in every step (`input` is the previous step's output). Only
 * templates see it, so the DESIGN payload of a step without args is unchanged.
 */
function runVariables(run: Run): { run: { input: unknown; id: string } } {
  return { run: { input: run.input, id: run.runId } };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
