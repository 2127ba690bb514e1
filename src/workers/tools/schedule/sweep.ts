import { agentPrincipal } from "../../../engine/acting-agent.ts";
import { DEFAULT_TIMEOUT_MS } from "../../../engine/engine.ts";
import { casUpdate, isConflict } from "../../../engine/state/cas.ts";
import type { StateClient } from "../../../engine/state/client.ts";
import { systemPrincipal, type TriggerFn } from "../../../engine/types.ts";
import { nowIso } from "../../../shared/clock.ts";
import { DUE_SCOPE, type Job, jobsScope, jobWrites, MIN_INTERVAL_MS, upcoming } from "./store.ts";

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
    const after = job.kind === "cron" && job.schedule ? nextTime(job, now) : null;
    const busy = stillRunning(job, now);
    const next: Job = busy
      ? { ...job, skipped: (job.skipped ?? 0) + 1, nextRunAt: after, status: after ? "scheduled" : "done" }
      : {
          ...job,
          runs: job.runs + 1,
          lastRunAt: nowIso(),
          runningSince: now.toISOString(),
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
    if (busy) continue;
    fired++;
    void fire(state, trigger, next);
  }
  return fired;
}

/**
 * A time whose turn has not ended after this long is taken for lost (its process died, say) and the job
 * fires again: twice as long as the sweep waits for a turn or run (the engine's call timeout).
 */
const RUNNING_STALE_MS = 2 * DEFAULT_TIMEOUT_MS;

/** The job's previous time is still under way: this time is skipped, so turns never pile up. */
function stillRunning(job: Job, now: Date): boolean {
  return !!job.runningSince && now.getTime() - Date.parse(job.runningSince) < RUNNING_STALE_MS;
}

/**
 * The job's next time. An agent's own task waits at least MIN_INTERVAL_MS, whatever its expression says
 * (one stored by an older build may fire every second); a hand's schedule is the operator's.
 */
function nextTime(job: Job, now: Date): string | null {
  const from = job.workflowId ? now : new Date(now.getTime() + MIN_INTERVAL_MS - 1000);
  try {
    return upcoming(job.schedule as string, from);
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
  // Only these two fields, on the record as it is now: the sweep may have moved the job meanwhile.
  await casUpdate<Job>(state, jobsScope(job.realmId), job.id, ({ value }) =>
    value ? { ...value, lastError, runningSince: null } : undefined,
  ).catch(() => undefined);
}
