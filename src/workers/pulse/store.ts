import { casUpdate, isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { LastTick, PulseConfig, PulseRun } from "./schema.ts";

/** Keyed `<realmId>/<agentId>`: one realm's records are one key prefix (purge), one agent's one key. */
export const CONFIGS_SCOPE = "pulse_configs";
export const LAST_TICKS_SCOPE = "pulse_last_ticks";
/** Per agent: the atomic run counter that names run keys. */
export const SEQUENCES_SCOPE = "pulse_run_seq";
export const LEASES_SCOPE = "pulse_leases";
/** wakeOn "changes": the digest of what the agent saw at its last completed run. */
export const SEEN_SCOPE = "pulse_seen";
/** One scope per realm; keys `<agentId>/<13 digits>`, so one agent's runs are a prefix, newest first. */
export const runsScope = (realmId: string) => `pulse_runs:${realmId}`;

/** Runs kept per agent; older ones are deleted as new ones are written. */
export const RUN_RETENTION = 1000;
const SEQ_CEILING = 1e12;

export const agentKey = (realmId: string, agentId: string) => `${realmId}/${agentId}`;
export const realmPrefix = (realmId: string) => `${realmId}/`;

export function splitAgentKey(key: string): { realmId: string; agentId: string } {
  const slash = key.indexOf("/");
  return { realmId: key.slice(0, slash), agentId: key.slice(slash + 1) };
}

/** Run n of an agent: counting down from 1e12, so key order is newest first. */
export const runKey = (agentId: string, seq: number) =>
  `${agentId}/${String(SEQ_CEILING - seq).padStart(13, "0")}`;

export function getConfig(state: StateClient, realmId: string, agentId: string) {
  return state.get<PulseConfig>(CONFIGS_SCOPE, agentKey(realmId, agentId));
}

/**
 * Reserves the next run key of an agent with one atomic increment, writes the run there and drops
 * the run RUN_RETENTION places back: retention costs one delete per run, never a scan.
 */
export async function createRun(state: StateClient, run: PulseRun): Promise<string> {
  const key = agentKey(run.realmId, run.agentId);
  const { new_value } = await state.update<{ seq: number }>(SEQUENCES_SCOPE, key, [
    { type: "increment", path: "seq", by: 1 },
  ]);
  const seq = new_value.seq;
  const scope = runsScope(run.realmId);
  const storedKey = runKey(run.agentId, seq);
  await state.set(scope, storedKey, run);
  if (seq > RUN_RETENTION) {
    // Best effort: a failed delete leaves one extra old run, which is harmless.
    await state.delete(scope, runKey(run.agentId, seq - RUN_RETENTION)).catch(() => undefined);
  }
  return storedKey;
}

/**
 * The run as it ended, over its Running record: unless that record is gone, deleted by the purge of its
 * agent or realm while the run went on. Written back then, it would outlive them for good (nothing
 * purges that agent again), and status would still answer for the deleted agent.
 */
export async function saveRun(state: StateClient, storedKey: string, run: PulseRun): Promise<void> {
  await casUpdate<PulseRun>(state, runsScope(run.realmId), storedKey, ({ value }) =>
    value ? run : undefined,
  );
}

/** Newest first: the key order. */
export async function recentRuns(
  state: StateClient,
  realmId: string,
  agentId: string,
  limit: number,
): Promise<PulseRun[]> {
  const page = await state.list<PulseRun>(runsScope(realmId), { prefix: `${agentId}/`, limit });
  return page.items.map((item) => item.value);
}

export function getLastTick(state: StateClient, realmId: string, agentId: string) {
  return state.get<LastTick>(LAST_TICKS_SCOPE, agentKey(realmId, agentId));
}

export async function saveLastTick(
  state: StateClient,
  realmId: string,
  agentId: string,
  tick: LastTick,
): Promise<void> {
  await state.set(LAST_TICKS_SCOPE, agentKey(realmId, agentId), tick);
}

/** Keys of every stored config of a realm (or of all realms), for restore and purge. */
export async function configKeys(state: StateClient, realmId?: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const record of state.scan(CONFIGS_SCOPE, realmId ? realmPrefix(realmId) : undefined)) {
    keys.push(record.key);
  }
  return keys;
}

/** Deletes every record of a scope under a prefix. Tolerates records deleted meanwhile. */
export async function deleteAll(state: StateClient, scope: string, prefix?: string): Promise<void> {
  const keys: string[] = [];
  for await (const record of state.scan(scope, prefix)) keys.push(record.key);
  for (const key of keys) {
    await state.delete(scope, key).catch((error) => {
      if (!isConflict(error)) throw error;
    });
  }
}
