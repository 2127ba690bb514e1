import type { StateClient } from "../../engine/state/client.ts";
import { encodeCursor as encodeStateCursor } from "../../engine/state/keys.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { decodeCursor, encodeCursor, newestFirstKey } from "../../shared/pagination.ts";
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

/**
 * Runs newest first (indexKey): every run in ALL_RUNS_INDEX, a realm key's runs
 * also in their realm's. A listing pages through its index (entries of a few bytes) and reads only the
 * runs of its page: run records hold outputs of up to a megabyte and are never deleted, so reading every
 * one for each listing made any realm's listing as slow as all realms' history.
 */
export const ALL_RUNS_INDEX = "bridge_run_index";
export const realmRunsIndex = (realmId: string) => `bridge_run_index:${realmId}`;
/** Set once every run stored before the indexes existed has its entries (see buildRunIndexes). */
const INDEXES_BUILT = { scope: "bridge_meta", key: "run_indexes" };

interface IndexEntry {
  id: string;
  runtimeId: string;
}

/** Sorts newest first: the start time counted down, then the id. */
const indexKey = (run: BridgeRun) => newestFirstKey(run.startedAt, run.id);

function indexOps(run: BridgeRun): BatchOp[] {
  const key = indexKey(run);
  const value: IndexEntry = { id: run.id, runtimeId: run.runtimeId };
  return [
    { type: "set", scope: ALL_RUNS_INDEX, key, value },
    ...(run.realmId ? [{ type: "set" as const, scope: realmRunsIndex(run.realmId), key, value }] : []),
  ];
}

/** The run record, its place in the active set and in the indexes, written before the process starts. */
export async function startRecord(state: StateClient, run: BridgeRun): Promise<void> {
  await state.batch([
    { type: "set", scope: RUNS_SCOPE, key: run.id, value: run, expectedVersion: 0 },
    { type: "set", scope: ACTIVE_SCOPE, key: run.id, value: { startedAt: run.startedAt } },
    ...indexOps(run),
  ]);
}

/** Index entries for runs stored before the indexes existed: once, at start (idempotent). */
export async function buildRunIndexes(state: StateClient): Promise<void> {
  if (await state.get(INDEXES_BUILT.scope, INDEXES_BUILT.key)) return;
  for await (const { value } of state.scan<BridgeRun>(RUNS_SCOPE)) await state.batch(indexOps(value));
  await state.set(INDEXES_BUILT.scope, INDEXES_BUILT.key, { at: nowIso() });
}

/**
 * One page of runs, newest first, from an index (ALL_RUNS_INDEX for admins, a realm's for its keys),
 * of one runtime or all; `cursor` is the position the previous page ended at.
 */
export async function runsPage(
  state: StateClient,
  index: string,
  options: { runtimeId?: string; limit: number; cursor?: string },
): Promise<{ runs: BridgeRun[]; nextCursor: string | null }> {
  const picked: Array<{ id: string; position: string }> = [];
  let more = false;
  let after = options.cursor === undefined ? undefined : encodeStateCursor(decodeCursor(options.cursor));
  scan: do {
    const page = await state.list<IndexEntry>(index, { limit: 1000, cursor: after });
    for (const { key, value } of page.items) {
      if (options.runtimeId !== undefined && value.runtimeId !== options.runtimeId) continue;
      if (picked.length === options.limit) {
        more = true;
        break scan;
      }
      picked.push({ id: value.id, position: key });
    }
    after = page.nextCursor ?? undefined;
  } while (after);
  const found = await Promise.all(picked.map(({ id }) => state.get<BridgeRun>(RUNS_SCOPE, id)));
  const last = picked.at(-1);
  return {
    runs: found.filter((run): run is BridgeRun => run !== null),
    nextCursor: more && last ? encodeCursor(last.position) : null,
  };
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

/** Every run of a realm, with its index entries (a realm delete); returns how many. */
export async function purgeRealmRuns(state: StateClient, realmId: string): Promise<number> {
  const runs: BridgeRun[] = [];
  for await (const { value } of state.scan<BridgeRun>(RUNS_SCOPE))
    if (value.realmId === realmId) runs.push(value);
  for (const run of runs) {
    await state.batch([
      { type: "delete", scope: ACTIVE_SCOPE, key: run.id },
      { type: "delete", scope: RUNS_SCOPE, key: run.id },
      ...indexOps(run).map(({ scope, key }) => ({ type: "delete" as const, scope, key })),
    ]);
  }
  return runs.length;
}
