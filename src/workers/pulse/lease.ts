import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { newId } from "../../shared/ids.ts";
import type { PulseRun } from "./schema.ts";
import { agentKey, LEASES_SCOPE, runsScope, splitAgentKey } from "./store.ts";

interface LeaseRecord {
  holder: string;
  acquiredAt: string;
  /** After this instant the run is presumed dead (its process stopped) and the lease may be taken over. */
  expiresAt: string;
  /** The stored key of the run holding the lease, once it is written. */
  runKey?: string;
}

export interface Lease {
  /** Notes which run holds the lease, so a run left behind by a dead process can be marked interrupted. */
  attach(runKey: string): Promise<void>;
  release(): Promise<void>;
}

/**
 * One pulse run per agent at a time, across nodes: the lease is a record created with expectedVersion
 * 0 (exactly one creator wins). A lease past its expiry belongs to a run that can no longer be alive
 * (it outlived every timeout and retry it could have): it is taken over, again by compare-and-swap so
 * that two nodes cannot both take it, and the run it held is marked Failed (interrupted). Null when
 * another run holds it.
 */
export async function acquireLease(
  state: StateClient,
  realmId: string,
  agentId: string,
  maxDurationMs: number,
): Promise<Lease | null> {
  const key = agentKey(realmId, agentId);
  let record: LeaseRecord = {
    holder: newId("lease"),
    acquiredAt: nowIso(),
    expiresAt: new Date(nowMs() + maxDurationMs).toISOString(),
  };
  let version = (await writeIfVersion(state, key, record, 0)) ?? (await takeOverStale(state, key, record));
  if (version === null) return null;
  return {
    attach: async (runKey) => {
      record = { ...record, runKey };
      // A conflict means the lease was taken over meanwhile; the run goes on, its new holder decides.
      version = (await writeIfVersion(state, key, record, version as number)) ?? version;
    },
    release: async () => {
      // Only our own version is deleted: a lease taken over after ours expired stays with its new holder.
      await state.delete(LEASES_SCOPE, key, version as number).catch((error) => {
        if (!isConflict(error)) throw error;
      });
    },
  };
}

async function takeOverStale(state: StateClient, key: string, record: LeaseRecord): Promise<number | null> {
  const current = await state.getVersioned<LeaseRecord>(LEASES_SCOPE, key);
  // Released between our two reads: the record is free again (version 0).
  if (!current) return writeIfVersion(state, key, record, 0);
  if (Date.parse(current.value.expiresAt) > nowMs()) return null;
  const version = await writeIfVersion(state, key, record, current.version);
  if (version !== null) await interruptRun(state, key, current.value.runKey);
  return version;
}

/**
 * Single-node start-up: no run can be going yet, so every lease was left by the previous process.
 * Each is removed and the run it held is marked interrupted. Not for cluster mode, where another
 * node's live run holds its lease.
 */
export async function recoverLeases(state: StateClient): Promise<number> {
  const leases: Array<{ key: string; runKey?: string }> = [];
  for await (const record of state.scan<LeaseRecord>(LEASES_SCOPE)) {
    leases.push({ key: record.key, runKey: record.value.runKey });
  }
  for (const lease of leases) {
    await interruptRun(state, lease.key, lease.runKey);
    await state.delete(LEASES_SCOPE, lease.key);
  }
  return leases.length;
}

async function interruptRun(state: StateClient, leaseKey: string, runKey: string | undefined): Promise<void> {
  if (!runKey) return;
  const scope = runsScope(splitAgentKey(leaseKey).realmId);
  const run = await state.get<PulseRun>(scope, runKey);
  if (run?.status !== "Running") return;
  const error = "interrupted: the process running this pulse stopped before it finished";
  await state.set(scope, runKey, { ...run, status: "Failed", error, finishedAt: nowIso() });
}

/** The written version, or null when someone else wrote first. */
async function writeIfVersion(
  state: StateClient,
  key: string,
  record: LeaseRecord,
  expectedVersion: number,
): Promise<number | null> {
  try {
    return (await state.set(LEASES_SCOPE, key, record, expectedVersion)).version;
  } catch (error) {
    if (isConflict(error)) return null;
    throw error;
  }
}
