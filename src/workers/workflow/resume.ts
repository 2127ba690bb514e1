import type { StateClient } from "../../engine/state/client.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { type ExecutorDeps, executeRun } from "./executor.ts";
import { type Leases, takeOverLapsed } from "./lease.ts";
import type { Run } from "./schema.ts";
import { ACTIVE_SCOPE, loadRun, loadWorkflow, runRealm } from "./store.ts";

export interface ResumeOptions {
  state: StateClient;
  deps: ExecutorDeps;
  /** Cluster mode: only runs whose lease lapsed are taken, each by one node. */
  leases?: Leases;
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
  const { state, leases } = options;
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
  const workflow = await loadWorkflow(options.state, runRealm(run), run.workflowId);
  // Runs started before runs recorded their rights resume confined to their realm, never as the service.
  run.principal ??= { kind: "realm", keyId: "unknown", realmId: runRealm(run) };
  const stopped = workflow?.steps[run.position]?.name ?? `step ${run.position}`;
  if (!workflow) return interrupt(options, run, stopped, `workflow ${run.workflowId} no longer exists`);
  const missing = await waitForFunctions(
    options,
    workflow.steps.slice(run.position).map((step) => step.functionId),
  );
  if (missing.length > 0) {
    return interrupt(options, run, stopped, `functions not available after restart: ${missing.join(", ")}`);
  }
  options.deps.publish("started", run);
  await executeRun(options.deps, workflow, run).catch(() => undefined);
}

async function interrupt(options: ResumeOptions, run: Run, step: string, reason: string): Promise<void> {
  run.status = "interrupted";
  run.stoppedAt = step;
  run.error = `Interrupted at step "${step}": ${reason}`;
  run.finishedAt = nowIso();
  await options.deps.checkpoint(run);
  options.deps.publish("failed", run);
}

/** The ids among `functionIds` still missing when the grace period ends (none: ready). */
async function waitForFunctions(options: ResumeOptions, functionIds: string[]): Promise<string[]> {
  const deadline = nowMs() + options.graceMs;
  for (;;) {
    const listed = (await options.deps.trigger({
      function_id: "engine::functions::list",
      payload: { include_internal: true },
    })) as {
      functions: Array<{ function_id: string }>;
    };
    const present = new Set(listed.functions.map((fn) => fn.function_id));
    const missing = [...new Set(functionIds)].filter((id) => !present.has(id));
    if (missing.length === 0 || nowMs() >= deadline) return missing;
    await new Promise((resolve) => setTimeout(resolve, 250).unref());
  }
}
