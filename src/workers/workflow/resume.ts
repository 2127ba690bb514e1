import { call } from "../../engine/call.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { takeOverLapsed } from "./lease.ts";
import { claimLocal, execute, type RunControl } from "./runs.ts";
import type { Run } from "./schema.ts";
import { ACTIVE_SCOPE, loadRun, loadWorkflow, RUNS_SCOPE, runRealm, type StoredRun } from "./store.ts";

export interface ResumeOptions {
  state: StateClient;
  /** The executor and this process's runs (cluster mode: its leases; only lapsed runs are taken). */
  control: RunControl;
  graceMs: number;
  warn: (message: string) => void;
}

/**
 * Runs that were running when the process died continue from their last checkpoint: completed steps
 * are kept, the step that was in flight runs again. A run whose workflow is gone, or whose steps'
 * functions do not appear within the grace period (remote workers reconnecting), is marked
 * `interrupted` with the step it stopped at. Returns how many runs were picked up.
 */
export async function resumeRuns(options: ResumeOptions): Promise<number> {
  const { state } = options;
  const { leases } = options.control;
  if (leases) {
    return takeOverLapsed(state, leases, (run) => {
      void resumeOne(options, run)
        .catch((error) => options.warn(`Run ${run.runId} could not resume: ${(error as Error).message}`))
        .finally(() => leases.local.delete(run.runId));
    });
  }
  let resumed = 0;
  for await (const record of state.scan<{ workflowId: string }>(ACTIVE_SCOPE)) {
    const run = await loadRun(state, record.key);
    if (run?.status !== "running") {
      await state.delete(ACTIVE_SCOPE, record.key);
      continue;
    }
    resumed++;
    void resumeOne(options, run).catch((error) =>
      options.warn(`Run ${run.runId} could not resume: ${(error as Error).message}`),
    );
  }
  return resumed;
}

async function resumeOne(options: ResumeOptions, run: Run): Promise<void> {
  const { control } = options;
  // Cancellable from now on, while it waits for its functions too (a cancel here records it at once).
  claimLocal(control, run.runId);
  try {
    await resumeClaimed(options, run);
  } finally {
    if (control.local.get(run.runId)?.done === undefined) control.local.delete(run.runId);
  }
}

async function resumeClaimed(options: ResumeOptions, run: Run): Promise<void> {
  const { control } = options;
  const workflow = await loadWorkflow(options.state, runRealm(run), run.workflowId);
  // Runs started before runs recorded their rights resume confined to their realm, never as the service.
  run.principal ??= { kind: "realm", keyId: "unknown", realmId: runRealm(run) };
  const stopped = workflow?.steps[run.position]?.name ?? `step ${run.position}`;
  // Cancelled on another node while its owner was gone: taking it over ends it, no step runs again.
  if (run.cancelRequested) return stopCancelled(options, run, stopped);
  if (!workflow) return interrupt(options, run, stopped, `workflow ${run.workflowId} no longer exists`);
  // Its position and results are the old steps', and its rights were checked against them (as a retry).
  if (run.workflowVersion !== undefined && run.workflowVersion !== workflow.version) {
    const changed = `workflow ${workflow.id} changed since it started (version ${run.workflowVersion}, now ${workflow.version}); start a new run`;
    return interrupt(options, run, `step ${run.position}`, changed);
  }
  const missing = await waitForFunctions(
    options,
    workflow.steps.slice(run.position).map((step) => step.functionId),
    control.local.get(run.runId)?.controller.signal,
  );
  // Cancelled here (recorded at once) or finished elsewhere while it waited: nothing to resume. Flagged
  // from another node meanwhile (this node owns the run now): this node ends it cancelled, as asked,
  // whether or not its functions came back (it would not run them anyway).
  const stored = await options.state.get<StoredRun>(RUNS_SCOPE, run.runId);
  if (stored?.status !== "running") return;
  if (stored.cancelRequested) return stopCancelled(options, run, stopped);
  if (missing.length > 0) {
    return interrupt(options, run, stopped, `functions not available after restart: ${missing.join(", ")}`);
  }
  control.deps.publish("started", run);
  await execute(control, workflow, run).catch(() => undefined);
}

/** Ends a run cancelled before it could resume, at the step it had stopped at. */
async function stopCancelled(options: ResumeOptions, run: Run, step: string): Promise<void> {
  run.status = "cancelled";
  run.stoppedAt = step;
  run.error = `Cancelled at step "${step}"`;
  run.finishedAt = nowIso();
  await options.control.deps.checkpoint(run);
  options.control.deps.publish("cancelled", run);
}

async function interrupt(options: ResumeOptions, run: Run, step: string, reason: string): Promise<void> {
  run.status = "interrupted";
  run.stoppedAt = step;
  run.error = `Interrupted at step "${step}": ${reason}`;
  run.finishedAt = nowIso();
  await options.control.deps.checkpoint(run);
  options.control.deps.publish("failed", run);
}

/**
 * The ids among `functionIds` still missing when the grace period ends (none: ready), or at once when
 * `cancelled` aborts (a cancel heard while waiting: the run will not run them).
 */
async function waitForFunctions(
  options: ResumeOptions,
  functionIds: string[],
  cancelled?: AbortSignal,
): Promise<string[]> {
  const deadline = nowMs() + options.graceMs;
  for (;;) {
    const listed = await call(options.control.deps.trigger, "engine::functions::list", {
      include_internal: true,
    });
    const present = new Set(listed.functions.map((fn) => fn.function_id));
    const missing = [...new Set(functionIds)].filter((id) => !present.has(id));
    if (missing.length === 0 || nowMs() >= deadline || cancelled?.aborted) return missing;
    await pause(250, cancelled);
  }
}

/** Waits `ms`, or less if `signal` aborts meanwhile. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    timer.unref();
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
