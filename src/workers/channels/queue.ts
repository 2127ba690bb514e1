import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { isAppError } from "../../shared/errors.ts";
import type { ChannelJob } from "./schema.ts";

/**
 * Jobs owed to platforms (agent turns, then replies), one queue per realm: keys `<due ISO
 * time>\u0001<jobId>`, so a listing in key order is by time, and one realm's backlog never stands in
 * front of another realm's jobs.
 */
export const queueScope = (realmId: string) => `channel_queue:${realmId}`;
/** The realms whose queue may hold jobs (an entry is removed once its queue is found empty). */
export const QUEUED_REALMS_SCOPE = "channel_queue_realms";
/** The one queue of every realm that builds before per-realm queues used: still drained, never added to. */
export const LEGACY_QUEUE_SCOPE = "channel_queue";
/** Jobs that failed for good (kept for the operator; listed by GET /api/channels/failed). */
export const FAILED_SCOPE = "channel_failed";
/** A job claimed by a node comes back after this long if that node died before finishing it. */
const LEASE_MS = 10 * 60_000;
export const MAX_ATTEMPTS = 8;
/** Jobs a process works on at once, all realms together (AGENTOS_CHANNEL_CONCURRENCY). */
export const DEFAULT_CONCURRENCY = 64;

const keyOf = (dueMs: number, id: string) => `${new Date(dueMs).toISOString()}\u0001${id}`;
/** The writes that queue a job in its realm's queue and mark that queue as holding work. */
const queueOps = (job: ChannelJob, dueMs: number): BatchOp[] => [
  { type: "set", scope: queueScope(job.realmId), key: keyOf(dueMs, job.id), value: job },
  { type: "set", scope: QUEUED_REALMS_SCOPE, key: job.realmId, value: {} },
];

export async function enqueue(state: StateClient, job: ChannelJob, dueMs = Date.now()): Promise<void> {
  await state.batch(queueOps(job, dueMs));
}

/**
 * A job queued at `dueMs` replaced by `next` (null: by nothing), due now. Refused (a conflict) when a
 * node has claimed it meanwhile: that node's run stands.
 */
export async function replaceQueued(
  state: StateClient,
  job: ChannelJob,
  dueMs: number,
  next: ChannelJob | null,
): Promise<void> {
  await state.batch([
    // Version 1 is the entry as enqueue wrote it; a claim deletes it.
    { type: "delete", scope: queueScope(job.realmId), key: keyOf(dueMs, job.id), expectedVersion: 1 },
    ...(next ? queueOps(next, Date.now()) : []),
  ]);
}

/**
 * What one process is working on: jobs per realm, so the next free place goes to the realm with the
 * fewest (a realm flooded with messages gets its share, not the service), and at most `limit` in all.
 */
export class QueueRunner {
  private readonly running = new Map<string, number>();
  /** When each realm last had a job started (a count): of realms running as few, the longest waiting goes first. */
  private readonly served = new Map<string, number>();
  private starts = 0;
  private total = 0;
  private sweeping: Promise<number> | null = null;
  private again = false;

  private readonly state: StateClient;
  private readonly work: (job: ChannelJob) => Promise<ChannelJob | null>;
  readonly limit: number;
  /** Called when a job ends, so a waiting one can take its place. */
  private readonly freed: () => void;

  constructor(
    state: StateClient,
    work: (job: ChannelJob) => Promise<ChannelJob | null>,
    limit = DEFAULT_CONCURRENCY,
    freed: () => void = () => {},
  ) {
    this.state = state;
    this.work = work;
    this.limit = limit;
    this.freed = freed;
  }

  /** Jobs of `realmId` (undefined: all realms) being worked on in this process. */
  inFlight(realmId?: string): number {
    return realmId === undefined ? this.total : (this.running.get(realmId) ?? 0);
  }

  /** runDue now; asked while it runs, once more right after (sweeps never overlap, none is lost). */
  sweep(): Promise<number> {
    if (this.sweeping) {
      this.again = true;
      return this.sweeping;
    }
    const run = async () => {
      let started = 0;
      do {
        this.again = false;
        started += await this.runDue();
      } while (this.again);
      return started;
    };
    this.sweeping = run().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  /**
   * Starts due jobs while places are free: each time one job of the realm with the fewest running
   * here. A job is claimed by moving it (in one transaction, conditional on the version read) to a lease
   * entry in the future: one node wins, and if it dies the lease comes due and another node takes it.
   */
  async runDue(nowMs = Date.now()): Promise<number> {
    const queues = await this.queues();
    const heads = new Map<Queue, Array<Listed>>();
    let started = 0;
    while (this.total < this.limit) {
      const queue = this.fewestRunning(queues);
      if (!queue) break;
      let due = heads.get(queue);
      if (!due) {
        due = await this.dueJobs(queue, nowMs);
        heads.set(queue, due);
      }
      const next = due.shift();
      if (!next) {
        queues.splice(queues.indexOf(queue), 1);
        continue;
      }
      if (await this.claim(queue, next, nowMs)) started++;
    }
    return started;
  }

  /** The legacy queue and every realm queue that may hold jobs. */
  private async queues(): Promise<Queue[]> {
    const queues: Queue[] = [{ scope: LEGACY_QUEUE_SCOPE }];
    for await (const { key, version } of this.state.scan(QUEUED_REALMS_SCOPE)) {
      queues.push({ scope: queueScope(key), realmId: key, version });
    }
    return queues;
  }

  /** The queue to start a job of next: the legacy one first, then by fewest running, longest waiting. */
  private fewestRunning(queues: Queue[]): Queue | undefined {
    let best: Queue | undefined;
    for (const queue of queues) {
      if (!best || this.rank(queue) < this.rank(best)) best = queue;
    }
    return best;
  }

  private rank({ realmId }: Queue): number {
    if (realmId === undefined) return -1;
    return this.inFlight(realmId) * 2 ** 32 + (this.served.get(realmId) ?? -1) + 1;
  }

  /** The queue's due jobs (as many as could start now); an empty realm queue loses its mark. */
  private async dueJobs(queue: Queue, nowMs: number): Promise<Listed[]> {
    const { items } = await this.state.list<ChannelJob>(queue.scope, { limit: this.limit - this.total });
    if (items.length === 0 && queue.realmId !== undefined) {
      // Conditional on the mark's version: a job queued meanwhile wrote the mark again and keeps it.
      await this.state.delete(QUEUED_REALMS_SCOPE, queue.realmId, queue.version).catch(() => undefined);
    }
    return items.filter(({ key }) => Date.parse(key.split("\u0001")[0] as string) <= nowMs);
  }

  private async claim(queue: Queue, { key, value: job, version }: Listed, nowMs: number): Promise<boolean> {
    const lease = keyOf(nowMs + LEASE_MS, job.id);
    const claimed = { ...job, attempts: job.attempts + 1, leased: true };
    try {
      await this.state.batch([
        { type: "delete", scope: queue.scope, key, expectedVersion: version },
        { type: "set", scope: queue.scope, key: lease, value: claimed },
      ]);
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
    this.running.set(job.realmId, this.inFlight(job.realmId) + 1);
    this.served.set(job.realmId, ++this.starts);
    this.total++;
    void settle(this.state, { scope: queue.scope, key: lease }, claimed, this.work).finally(() => {
      const left = this.inFlight(job.realmId) - 1;
      if (left > 0) this.running.set(job.realmId, left);
      else this.running.delete(job.realmId);
      this.total--;
      this.freed();
    });
    return true;
  }
}

interface Queue {
  scope: string;
  /** Unset for the legacy queue (its jobs name their realms). */
  realmId?: string;
  /** The version of the realm's mark as listed. */
  version?: number;
}

interface Listed {
  key: string;
  value: ChannelJob;
  version: number;
}

async function settle(
  state: StateClient,
  lease: { scope: string; key: string },
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
  const ops: BatchOp[] = [{ type: "delete", scope: lease.scope, key: lease.key }];
  if (next && failure === undefined) ops.push(...queueOps({ ...next, attempts: 0 }, Date.now()));
  else if (next && (job.attempts >= MAX_ATTEMPTS || permanent))
    ops.push({ type: "set", scope: FAILED_SCOPE, key: job.id, value: { ...next, failedAt: nowIso() } });
  else if (next) ops.push(...queueOps(next, Date.now() + backoffMs(job.attempts)));
  await state.batch(ops).catch(() => undefined);
}

/** 1 s, 2 s, 4 s … capped at 5 minutes. */
export const backoffMs = (attempts: number) => Math.min(1000 * 2 ** Math.max(0, attempts - 1), 300_000);

/** The scopes of every queue: the legacy one and each realm's that may hold jobs. */
export async function queueScopes(state: StateClient): Promise<string[]> {
  const scopes = [LEGACY_QUEUE_SCOPE];
  for await (const { key } of state.scan(QUEUED_REALMS_SCOPE)) scopes.push(queueScope(key));
  return scopes;
}

/**
 * At the start of a process that is the only one (embedded mode): jobs leased by the process that died
 * are due again at once, instead of after their lease.
 */
export async function recoverLeases(state: StateClient): Promise<number> {
  let recovered = 0;
  for (const scope of await queueScopes(state)) {
    for await (const { key, value, version } of state.scan<ChannelJob>(scope)) {
      if (!value.leased) continue;
      const { leased: _dropped, ...job } = value;
      try {
        await state.batch([
          { type: "delete", scope, key, expectedVersion: version },
          { type: "set", scope, key: keyOf(Date.now(), job.id), value: job },
        ]);
        recovered++;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
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
