import { report } from "../../engine/telemetry.ts";
import type { TriggerFn } from "../../engine/types.ts";
import type { RunEvent } from "./executor.ts";
import type { Run, StepResult } from "./schema.ts";

/**
 * A run's lifecycle event (and a step's outcome) as telemetry for metrics and logs. A failing step ends
 * the run without a step event of its own: it is counted from the failed run's `stoppedAt`.
 */
export function reportRunEvent(trigger: TriggerFn, event: RunEvent, run: Run, step?: StepResult): void {
  const base = {
    type: "workflow" as const,
    runId: run.runId,
    workflowId: run.workflowId,
    status: run.status,
  };
  if (event === "failed" && run.stoppedAt) {
    report(trigger, {
      ...base,
      event: "step_failed",
      step: { name: run.stoppedAt.slice(0, 256), status: "failed" },
    });
  }
  report(trigger, { ...base, event, ...(step ? { step: stepOutcome(step) } : {}) });
}

function stepOutcome(step: StepResult): { name: string; status: string; durationMs: number } {
  const status = step.skipped ? "skipped" : step.error !== undefined ? "failed" : "completed";
  return { name: step.stepName.slice(0, 256) || "step", status, durationMs: Math.max(0, step.durationMs) };
}
