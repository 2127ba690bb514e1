import { casUpdate, isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import { nowMs } from "../../shared/clock.ts";
import { newId } from "../../shared/ids.ts";
import type { Run } from "./schema.ts";
import { ACTIVE_SCOPE, knownVersion, loadRun, RUNS_SCOPE, rememberVersion, type StoredRun } from "./store.ts";

/** When this node first saw a run's record at the version it still has (its monotonic clock). */
interface Sighting {
  version: number;
  since: number;
}

/** Cluster mode: each node holds the runs it executes on a lease it renews (DESIGN: durable workflows). */
export interface Leases {
  nodeId: string;
  leaseMs: number;
  /** The runs this node executes now, by id. */
  local: Map<string, Run>;
  /** Other nodes' running runs, by id: whether their holder still renews them is judged from these. */
  watched: Map<string, Sighting>;
  /**
   * This node's monotonic clock (ms). Lease expiry is judged on it alone, never by comparing another
   * node's wall clock (`leaseUntil`) with this one's: a node whose clock runs ahead would otherwise take
   * over live runs. Tests replace it.
   */
  monotonic: () => number;
}

export const DEFAULT_LEASE_MS = 15_000;
/** Runs stored before leases existed: their node counts as gone once it has been quiet this long. */
const LEGACY_QUIET_MS = 5 * 60_000;
/** Renewals of runs whose version this node does not know yet (each a read and a write) at once. */
const RENEWALS_IN_PARALLEL = 8;
/** One state batch holds at most this many writes (MAX_BATCH_OPS of the state functions). */
const RENEWALS_PER_BATCH = 256;

export function createLeases(
  leaseMs = DEFAULT_LEASE_MS,
  monotonic: () => number = () => performance.now(),
): Leases {
  return { nodeId: newId("node"), leaseMs, local: new Map(), watched: new Map(), monotonic };
}

/** How often a node renews its leases and looks for lapsed ones: three times per lease, at most each second. */
export function tickSeconds(leases: Leases): number {
  return Math.max(1, Math.floor(leases.leaseMs / 3000));
}

/** A new or taken-over run belongs to this node until the lease runs out. */
export function hold(leases: Leases, run: Run): void {
  run.owner = leases.nodeId;
  run.leaseMs = leases.leaseMs;
  run.leaseUntil = new Date(nowMs() + leases.leaseMs).toISOString();
  leases.local.set(run.runId, run);
}

/**
 * Extends the lease of every run this node executes (a run another node took over is left alone);
 * `cancelled` hears of each run a cancel on another node flagged. The runs whose record is still at the
 * version this node last wrote (so still its own, running and not flagged) are renewed together, in one
 * state batch per 256; a batch that met a concurrent write (a checkpoint, a cancel, a take-over) is split
 * until the changed runs are found, and those, like runs whose version this node does not know, are
 * renewed run by run, a few at a time.
 */
export async function renewLeases(
  state: StateClient,
  leases: Leases,
  cancelled: (runId: string) => void = () => undefined,
): Promise<void> {
  const held = [...leases.local.values()].filter((run) => run.status === "running");
  const known = held.filter((run) => knownVersion(run) !== undefined);
  const oneByOne = held.filter((run) => knownVersion(run) === undefined);
  for (let start = 0; start < known.length; start += RENEWALS_PER_BATCH) {
    await renewTogether(state, leases, known.slice(start, start + RENEWALS_PER_BATCH), oneByOne);
  }
  for (let start = 0; start < oneByOne.length; start += RENEWALS_IN_PARALLEL) {
    const chunk = oneByOne.slice(start, start + RENEWALS_IN_PARALLEL);
    await Promise.all(chunk.map((run) => renewOne(state, leases, run, cancelled)));
  }
}

/** Renews `runs` in one batch, or halves it while some changed meanwhile; those go to `changed`. */
async function renewTogether(state: StateClient, leases: Leases, runs: Run[], changed: Run[]): Promise<void> {
  if (await renewUnchanged(state, leases, runs)) return;
  if (runs.length === 1) {
    changed.push(...runs);
    return;
  }
  const half = Math.ceil(runs.length / 2);
  await renewTogether(state, leases, runs.slice(0, half), changed);
  await renewTogether(state, leases, runs.slice(half), changed);
}

/** Renews `runs` in one batch, each on the version this node last wrote; false if any changed meanwhile. */
async function renewUnchanged(state: StateClient, leases: Leases, runs: Run[]): Promise<boolean> {
  const leaseUntil = new Date(nowMs() + leases.leaseMs).toISOString();
  const ops: BatchOp[] = runs.map((run) => ({
    type: "update",
    scope: RUNS_SCOPE,
    key: run.runId,
    ops: [{ type: "set", path: "leaseUntil", value: leaseUntil }],
    expectedVersion: knownVersion(run),
  }));
  try {
    const results = await state.batch(ops);
    for (const [index, run] of runs.entries()) {
      const result = results[index];
      if (result) rememberVersion(run, result.version);
    }
    return true;
  } catch (error) {
    // Any other failure (the database away) is not retried run by run: the next tick tries again.
    return !isConflict(error);
  }
}

/** Reads the run's record and extends its lease if it is still this node's and running. */
async function renewOne(
  state: StateClient,
  leases: Leases,
  run: Run,
  cancelled: (runId: string) => void,
): Promise<void> {
  const leaseUntil = new Date(nowMs() + leases.leaseMs).toISOString();
  const written = await casUpdate<StoredRun>(state, RUNS_SCOPE, run.runId, ({ value }) => {
    if (value?.cancelRequested) cancelled(run.runId);
    return value?.owner === leases.nodeId && value.status === "running"
      ? { ...value, leaseUntil }
      : undefined;
  }).catch(() => undefined);
  if (written?.changed) rememberVersion(run, written.version);
}

/**
 * Whether the run's holder let its lease lapse, as this node sees it: the record has not changed (no
 * renewal, no checkpoint) for a full lease of the holder's, measured on this node's monotonic clock
 * since it first saw that version. Needs no agreement between the nodes' wall clocks.
 */
function lapsed(leases: Leases, runId: string, current: { value: StoredRun; version: number }, now: number) {
  const seen = leases.watched.get(runId);
  if (seen?.version !== current.version) {
    leases.watched.set(runId, { version: current.version, since: now });
    return false;
  }
  const { value } = current;
  const quietMs = value.leaseUntil ? Math.max(leases.leaseMs, value.leaseMs ?? 0) : LEGACY_QUIET_MS;
  return now - seen.since >= quietMs;
}

/**
 * Takes over the running runs whose lease lapsed (their node died) or that their node released (it shut
 * down cleanly), each with a compare-and-swap on the run's record, so of several live nodes exactly one
 * gets it. `resume` continues each from its checkpoint. Returns how many were taken. A run not released
 * is first watched for a full lease (see `lapsed`), so a node takes no such run over on its first look.
 */
export async function takeOverLapsed(
  state: StateClient,
  leases: Leases,
  resume: (run: Run) => void,
): Promise<number> {
  const now = leases.monotonic();
  const running = new Set<string>();
  let taken = 0;
  for await (const record of state.scan(ACTIVE_SCOPE)) {
    if (leases.local.has(record.key)) continue;
    const current = await state.getVersioned<StoredRun>(RUNS_SCOPE, record.key);
    if (current?.value.status !== "running") continue;
    running.add(record.key);
    // Released by its node on a clean shutdown (no step in flight there): taken at once.
    if (!current.value.released && !lapsed(leases, record.key, current, now)) continue;
    const { released: _released, ...value } = current.value;
    const claimed: StoredRun = {
      ...value,
      owner: leases.nodeId,
      leaseMs: leases.leaseMs,
      leaseUntil: new Date(nowMs() + leases.leaseMs).toISOString(),
    };
    try {
      await state.set(RUNS_SCOPE, record.key, claimed, current.version);
    } catch (error) {
      if (isConflict(error)) continue;
      throw error;
    }
    const run = await loadRun(state, record.key);
    if (!run) continue;
    leases.local.set(run.runId, run);
    taken++;
    resume(run);
  }
  for (const runId of leases.watched.keys()) if (!running.has(runId)) leases.watched.delete(runId);
  return taken;
}
