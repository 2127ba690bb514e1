import { agentPrincipal } from "../../../engine/acting-agent.ts";
import { isConflict } from "../../../engine/state/cas.ts";
import type { StateClient } from "../../../engine/state/client.ts";
import { systemPrincipal, type TriggerFn } from "../../../engine/types.ts";
import { nowIso } from "../../../shared/clock.ts";
import { DUE_SCOPE, type Job, jobsScope, jobWrites, saveJob, upcoming } from "./store.ts";

const BATCH = 100;

/**
 * Fires every job whose time has come. The due entry is claimed in the same transaction that stores
 * the job's next time (cron) or marks it done (reminder): the delete is conditional on the version the
 * sweep read, so of several nodes (or sweeps) exactly one commits, and a crash leaves either the old
 * entry (it fires later) or the new state, never a job that silently stopped. The agent is then messaged
 * as itself (`agent:<id>` of its realm) in session `cron:<jobId>` (at most once per due time).
 */
export async function sweepDue(state: StateClient, trigger: TriggerFn, now = new Date()): Promise<number> {
  const { items } = await state.list<{ realmId: string; jobId: string }>(DUE_SCOPE, { limit: BATCH });
  let fired = 0;
  for (const { key, value, version } of items) {
    if ((key.split("\u0001")[0] as string) > now.toISOString()) break;
    const job = await state.get<Job>(jobsScope(value.realmId), value.jobId);
    if (job?.status !== "scheduled") {
      await state.delete(DUE_SCOPE, key, version).catch(() => undefined);
      continue;
    }
    // A schedule that fires no more (or no longer reads as one) ends with this run: it must never stop
    // the sweep, which takes every realm's due jobs in one order.
    const after = job.kind === "cron" && job.schedule ? nextTime(job.schedule, now) : null;
    const next: Job = {
      ...job,
      runs: job.runs + 1,
      lastRunAt: nowIso(),
      nextRunAt: after,
      status: after ? "scheduled" : "done",
    };
    try {
      await state.batch([
        { type: "delete", scope: DUE_SCOPE, key, expectedVersion: version },
        ...jobWrites(next),
      ]);
    } catch (error) {
      if (isConflict(error)) continue;
      throw error;
    }
    fired++;
    void fire(state, trigger, next);
  }
  return fired;
}

function nextTime(schedule: string, now: Date): string | null {
  try {
    return upcoming(schedule, now);
  } catch {
    return null;
  }
}

async function fire(state: StateClient, trigger: TriggerFn, job: Job): Promise<void> {
  const message = job.kind === "reminder" ? `Reminder: ${job.message}` : job.message;
  let lastError: string | null = null;
  try {
    if (job.workflowId) {
      // A declared hand's workflow: the operator's schedule, run in the agent's realm for the agent.
      await trigger({
        function_id: "workflow::run",
        payload: {
          workflowId: job.workflowId,
          realmId: job.realmId,
          agentId: job.agentId,
          input: job.message,
        },
        auth: systemPrincipal,
      });
    } else {
      await trigger({
        function_id: "agent::chat",
        payload: { agentId: job.agentId, message, sessionId: `cron:${job.id}` },
        auth: agentPrincipal({ id: job.agentId, realmId: job.realmId }),
      });
    }
  } catch (error) {
    lastError = (error as Error).message;
  }
  const current = await state.get<Job>(jobsScope(job.realmId), job.id);
  if (current && current.lastError !== lastError) await saveJob(state, { ...current, lastError }, current);
}
