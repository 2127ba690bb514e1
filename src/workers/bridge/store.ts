import type { StateClient } from "../../engine/state/client.ts";
import { nowIso } from "../../shared/clock.ts";
import { killLeftovers } from "../../shared/process/supervise.ts";
import type { BridgeRun, Runtime } from "./schema.ts";

/** Names a run's processes in their environment, so leftovers are found after a crash (children inherit it). */
export const RUN_MARKER = "AGENTOS_BRIDGE_RUN";
export const RUNTIMES_SCOPE = "bridge_runtimes";
export const RUNS_SCOPE = "bridge_runs";
/** Runs not finished yet, by id: what a restart looks at. */
export const ACTIVE_SCOPE = "bridge_runs_active";

export async function listRuntimes(state: StateClient): Promise<Runtime[]> {
  const runtimes: Runtime[] = [];
  for await (const { value } of state.scan<Runtime>(RUNTIMES_SCOPE)) runtimes.push(value);
  return runtimes.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || (a.id < b.id ? -1 : 1));
}

/** The run record and its place in the active set, written before the process starts. */
export async function startRecord(state: StateClient, run: BridgeRun): Promise<void> {
  await state.set(RUNS_SCOPE, run.id, run, 0);
  await state.set(ACTIVE_SCOPE, run.id, { startedAt: run.startedAt });
}

export async function finishRecord(state: StateClient, run: BridgeRun): Promise<void> {
  await state.set(RUNS_SCOPE, run.id, run);
  await state.delete(ACTIVE_SCOPE, run.id);
}

/**
 * At start: runs still `running` belong to a process that died with the previous service. Each is
 * marked `interrupted`, and every process it left (its group, and anything carrying its marker) is
 * killed, so no orphan survives a crash. Returns the runs interrupted.
 */
export async function interruptLeftovers(state: StateClient): Promise<BridgeRun[]> {
  const interrupted: BridgeRun[] = [];
  const ids: string[] = [];
  for await (const { key } of state.scan(ACTIVE_SCOPE)) ids.push(key);
  for (const id of ids) {
    const run = await state.get<BridgeRun>(RUNS_SCOPE, id);
    if (run?.status === "running") {
      const stopped: BridgeRun = {
        ...run,
        status: "interrupted",
        error: "The service stopped while the run was going; its processes were killed",
        finishedAt: nowIso(),
      };
      await state.set(RUNS_SCOPE, id, stopped);
      interrupted.push(stopped);
    }
    await state.delete(ACTIVE_SCOPE, id);
  }
  // By marker, never by the stored pid alone: after a reboot that pid may be someone else's.
  killLeftovers(RUN_MARKER, new Set(ids));
  return interrupted;
}

/** Every run of a realm (a realm delete); returns how many. */
export async function purgeRealmRuns(state: StateClient, realmId: string): Promise<number> {
  const ids: string[] = [];
  for await (const { key, value } of state.scan<BridgeRun>(RUNS_SCOPE))
    if (value.realmId === realmId) ids.push(key);
  for (const id of ids) {
    await state.delete(ACTIVE_SCOPE, id);
    await state.delete(RUNS_SCOPE, id);
  }
  return ids.length;
}
