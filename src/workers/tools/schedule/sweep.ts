import { agentPrincipal } from "../../../engine/acting-agent.ts";
import { DEFAULT_TIMEOUT_MS } from "../../../engine/engine.ts";
import { casUpdate, isConflict } from "../../../engine/state/cas.ts";
import type { StateClient } from "../../../engine/state/client.ts";
import { encodeCursor } from "../../../engine/state/keys.ts";
import { systemPrincipal, type TriggerFn } from "../../../engine/types.ts";
import { nowIso } from "../../../shared/clock.ts";
import { DUE_SCOPE, type Job, jobsScope, jobWrites, MIN_INTERVAL_MS, upcoming } from "./store.ts";

/** Due jobs one sweep fires at most (the sweep runs every second). */
const BATCH = 100;
/**
 * Due entries one sweep reads at most, to share its BATCH among the realms they belong to: a realm with
 * many due jobs would otherwise fill every batch with its own, delaying each other realm's.
 */
export const SCAN = 10 * BATCH;

type DueEntry = { key: string; value: { realmId: string; jobId: string }; version: number };

/**
 * Fires every job whose time has come, at most BATCH a sweep, taken round-robin by realm (fairShare)
 * from SCAN due entries (dueEntries). The due entry is claimed in the same transaction that stores
 * the job's next time (cron) or marks it done (reminder): the delete is conditional on the version the
 * sweep read, so of several nodes (or sweeps) exactly one commits, and a crash leaves either the old
 * entry (it fires later) or the new state, never a job that silently stopped. The agent is then messaged
 * as itself (`agent:<id>` of its realm) in session `cron:<jobId>` (at most once per due time).
 */
export async function sweepDue(state: StateClient, trigger: TriggerFn, now = new Date()): Promise<number> {
  let fired = 0;
  for (const entry of fairShare(await dueEntries(state, now), BATCH)) {
    if (await claim(state, entry, now, trigger)) fired++;
  }
  return fired;
}

/**
 * Where each service's previous sweep stopped reading due entries, having read SCAN of them: the next
 * sweep reads on from there (and the one after it from the oldest again), so a realm's backlog of more
 * than SCAN entries hides another realm's due job for backlog / SCAN sweeps, not until it is worked off
 * (backlog / BATCH). Per service: several nodes each read on from where their own sweep stopped.
 */
const readOnAfter = new WeakMap<StateClient, string>();

/** Due entries whose time has come, at most SCAN, oldest first from where the last sweep stopped reading. */
async function dueEntries(state: StateClient, now: Date): Promise<DueEntry[]> {
  const due: DueEntry[] = [];
  const from = readOnAfter.get(state);
  readOnAfter.delete(state);
  let cursor = from === undefined ? undefined : encodeCursor(from);
  do {
    const page = await state.list<DueEntry["value"]>(DUE_SCOPE, { limit: BATCH, cursor });
    for (const entry of page.items) {
      if ((entry.key.split("\u0001")[0] as string) > now.toISOString()) return due;
      if (due.length === SCAN) {
        readOnAfter.set(state, (due[SCAN - 1] as DueEntry).key);
        return due;
      }
      due.push(entry);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return due;
}

/**
 * At most `limit` entries, one of each realm in turn (realms in the order of their oldest entry, each
 * realm's own oldest first): a realm's many due jobs take only the places the other realms leave.
 */
function fairShare(entries: DueEntry[], limit: number): DueEntry[] {
  const byRealm = new Map<string, DueEntry[]>();
  for (const entry of entries) {
    const queue = byRealm.get(entry.value.realmId);
    if (queue) queue.push(entry);
    else byRealm.set(entry.value.realmId, [entry]);
  }
  const queues = [...byRealm.values()];
  const taken: DueEntry[] = [];
  for (let round = 0; taken.length < limit && queues.some((queue) => round < queue.length); round++) {
    for (const queue of queues) {
      const entry = queue[round];
      if (entry && taken.length < limit) taken.push(entry);
    }
  }
  return taken;
}

/** Claims one due entry (see sweepDue) and fires its job: true when it fired. */
async function claim(state: StateClient, entry: DueEntry, now: Date, trigger: TriggerFn): Promise<boolean> {
  const { key, value, version } = entry;
  const job = await state.get<Job>(jobsScope(value.realmId), value.jobId);
  if (job?.status !== "scheduled") {
    await state.delete(DUE_SCOPE, key, version).catch(() => undefined);
    return false;
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
    if (isConflict(error)) return false;
    throw error;
  }
  if (busy) return false;
  void fire(state, trigger, next);
  return true;
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
