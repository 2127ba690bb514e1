import { casUpdate, isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { nowMs } from "../../shared/clock.ts";
import { newId } from "../../shared/ids.ts";
import type { Run } from "./schema.ts";
import { ACTIVE_SCOPE, loadRun, RUNS_SCOPE, type StoredRun } from "./store.ts";

/** Cluster mode: each node holds the runs it executes on a lease it renews (DESIGN: durable workflows). */
export interface Leases {
  nodeId: string;
  leaseMs: number;
  /** The runs this node executes now, by id. */
  local: Map<string, Run>;
}

export const DEFAULT_LEASE_MS = 15_000;
/** Runs stored before leases existed: their node counts as gone once it has been quiet this long. */
const LEGACY_QUIET_MS = 5 * 60_000;

export function createLeases(leaseMs = DEFAULT_LEASE_MS): Leases {
  return { nodeId: newId("node"), leaseMs, local: new Map() };
}

/** How often a node renews its leases and looks for lapsed ones: three times per lease, at most each second. */
export function tickSeconds(leases: Leases): number {
  return Math.max(1, Math.floor(leases.leaseMs / 3000));
}

/** A new or taken-over run belongs to this node until the lease runs out. */
export function hold(leases: Leases, run: Run): void {
  run.owner = leases.nodeId;
  run.leaseUntil = new Date(nowMs() + leases.leaseMs).toISOString();
  leases.local.set(run.runId, run);
}

/**
 * Extends the lease of every run this node executes (a run another node took over is left alone);
 * `cancelled` hears of each run a cancel on another node flagged.
 */
export async function renewLeases(
  state: StateClient,
  leases: Leases,
  cancelled: (runId: string) => void = () => undefined,
): Promise<void> {
  for (const run of leases.local.values()) {
    const leaseUntil = new Date(nowMs() + leases.leaseMs).toISOString();
    await casUpdate<StoredRun>(state, RUNS_SCOPE, run.runId, ({ value }) => {
      if (value?.cancelRequested) cancelled(run.runId);
      return value?.owner === leases.nodeId && value.status === "running"
        ? { ...value, leaseUntil }
        : undefined;
    }).catch(() => undefined);
  }
}

function lapsed(run: StoredRun, now: number): boolean {
  if (run.leaseUntil) return Date.parse(run.leaseUntil) <= now;
  return now - Date.parse(run.heartbeatAt ?? run.startedAt) >= LEGACY_QUIET_MS;
}

/**
 * Takes over the running runs whose lease lapsed (their node died), each with a compare-and-swap on the
 * run's record, so of several live nodes exactly one gets it. `resume` continues each from its
 * checkpoint. Returns how many were taken.
 */
export async function takeOverLapsed(
  state: StateClient,
  leases: Leases,
  resume: (run: Run) => void,
): Promise<number> {
  const now = nowMs();
  let taken = 0;
  for await (const record of state.scan(ACTIVE_SCOPE)) {
    if (leases.local.has(record.key)) continue;
    const current = await state.getVersioned<StoredRun>(RUNS_SCOPE, record.key);
    if (current?.value.status !== "running" || !lapsed(current.value, now)) continue;
    const claimed: StoredRun = {
      ...current.value,
      owner: leases.nodeId,
      leaseUntil: new Date(now + leases.leaseMs).toISOString(),
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
  return taken;
}
