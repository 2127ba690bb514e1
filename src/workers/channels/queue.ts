import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { nowIso } from "../../shared/clock.ts";
import { isAppError } from "../../shared/errors.ts";
import type { ChannelJob } from "./schema.ts";

/** Replies owed to platforms: keys `<due ISO time>\u0001<jobId>`, so a listing in key order is by time. */
export const QUEUE_SCOPE = "channel_queue";
/** Jobs that failed for good (kept for the operator; listed by GET /api/channels/failed). */
export const FAILED_SCOPE = "channel_failed";
/** A job claimed by a node comes back after this long if that node died before finishing it. */
const LEASE_MS = 10 * 60_000;
export const MAX_ATTEMPTS = 8;

const keyOf = (dueMs: number, id: string) => `${new Date(dueMs).toISOString()}\u0001${id}`;

export async function enqueue(state: StateClient, job: ChannelJob, dueMs = Date.now()): Promise<void> {
  await state.set(QUEUE_SCOPE, keyOf(dueMs, job.id), job);
}

/**
 * Runs the jobs that are due. A job is claimed by moving it (in one transaction, conditional on the
 * version read) to a lease entry in the future: one node wins, and if it dies the lease comes due and
 * another node takes the job. `work` answers the job's next state (null: done) or throws (retried with
 * backoff, then kept in FAILED_SCOPE).
 */
export async function runDue(
  state: StateClient,
  work: (job: ChannelJob) => Promise<ChannelJob | null>,
  nowMs = Date.now(),
): Promise<number> {
  const { items } = await state.list<ChannelJob>(QUEUE_SCOPE, { limit: 50 });
  let started = 0;
  for (const { key, value: job, version } of items) {
    if (Date.parse(key.split("\u0001")[0] as string) > nowMs) break;
    const lease = keyOf(nowMs + LEASE_MS, job.id);
    const claimed = { ...job, attempts: job.attempts + 1, leased: true };
    try {
      await state.batch([
        { type: "delete", scope: QUEUE_SCOPE, key, expectedVersion: version },
        { type: "set", scope: QUEUE_SCOPE, key: lease, value: claimed },
      ]);
    } catch (error) {
      if (isConflict(error)) continue;
      throw error;
    }
    started++;
    void settle(state, lease, claimed, work);
  }
  return started;
}

async function settle(
  state: StateClient,
  lease: string,
  job: ChannelJob,
  work: (job: ChannelJob) => Promise<ChannelJob | null>,
) {
  let next: ChannelJob | null;
  let failure: string | undefined;
  let permanent = false;
  try {
    next = await work(job);
  } catch (error) {
    failure = (error as Error).message;
    // A refusal (no such agent, no access, bad input) will not change by retrying.
    permanent =
      isAppError(error) && ["not_found", "forbidden", "validation", "conflict"].includes(error.code);
    next = {
      ...job,
      lastError: failure,
      ...((error as { delivered?: number }).delivered !== undefined
        ? { delivered: (error as { delivered: number }).delivered }
        : {}),
    };
  }
  if (next) delete next.leased;
  const ops: Parameters<StateClient["batch"]>[0] = [{ type: "delete", scope: QUEUE_SCOPE, key: lease }];
  if (next && failure === undefined)
    ops.push({
      type: "set",
      scope: QUEUE_SCOPE,
      key: keyOf(Date.now(), next.id),
      value: { ...next, attempts: 0 },
    });
  else if (next && (job.attempts >= MAX_ATTEMPTS || permanent))
    ops.push({ type: "set", scope: FAILED_SCOPE, key: job.id, value: { ...next, failedAt: nowIso() } });
  else if (next)
    ops.push({
      type: "set",
      scope: QUEUE_SCOPE,
      key: keyOf(Date.now() + backoffMs(job.attempts), next.id),
      value: next,
    });
  await state.batch(ops).catch(() => undefined);
}

/** 1 s, 2 s, 4 s … capped at 5 minutes. */
export const backoffMs = (attempts: number) => Math.min(1000 * 2 ** Math.max(0, attempts - 1), 300_000);

/**
 * At the start of a process that is the only one (embedded mode): jobs leased by the process that died
 * are due again at once, instead of after their lease.
 */
export async function recoverLeases(state: StateClient): Promise<number> {
  let recovered = 0;
  for await (const { key, value, version } of state.scan<ChannelJob>(QUEUE_SCOPE)) {
    if (!value.leased) continue;
    const { leased: _dropped, ...job } = value;
    try {
      await state.batch([
        { type: "delete", scope: QUEUE_SCOPE, key, expectedVersion: version },
        { type: "set", scope: QUEUE_SCOPE, key: keyOf(Date.now(), job.id), value: job },
      ]);
      recovered++;
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }
  return recovered;
}

/** The jobs that failed for good, of one realm (undefined: all), oldest first. */
export async function failedJobs(state: StateClient, realmId: string | undefined): Promise<ChannelJob[]> {
  const failed: ChannelJob[] = [];
  for await (const { value } of state.scan<ChannelJob>(FAILED_SCOPE)) {
    if (!realmId || value.realmId === realmId) failed.push(value);
  }
  return failed.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}
