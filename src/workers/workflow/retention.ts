import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import { endedBefore, mayBeOlderThan, yieldToOthers } from "../../shared/retention.ts";
import { RUNS_SCOPE, runIndexEntry, type StoredRun, stepsScope } from "./store.ts";

/**
 * A run the retention may delete: finished (completed, failed, cancelled, interrupted: none of them runs
 * again unless retried, and a retry makes it running first) before the cutoff. A running run, however
 * old, is never one; nor is a record without its finish time.
 */
export function isExpiredRun(run: Pick<StoredRun, "status" | "finishedAt">, cutoff: number): boolean {
  return run.status !== "running" && endedBefore(run.finishedAt, cutoff);
}

/** Step results deleted per transaction (well under MAX_BATCH_OPS). */
const STEP_DELETES = 200;

/**
 * Deletes the runs of every realm finished before `cutoff` (each realm's by the same rule), with their
 * step results, their place in their workflow's listing and its count; returns how many. Reads a chunk
 * of runs at a time (mayBeOlderThan: the runs started since the cutoff are not read at all).
 */
export async function sweepRuns(state: StateClient, cutoff: number, now: number): Promise<number> {
  let deleted = 0;
  for await (const record of mayBeOlderThan<StoredRun>(state, RUNS_SCOPE, "run", cutoff, now)) {
    if (isExpiredRun(record.value, cutoff) && (await deleteRun(state, record.value, record.version))) {
      deleted++;
      await yieldToOthers();
    }
  }
  return deleted;
}

/**
 * One run, if its record is still the version read: a run retried meanwhile (running again) is kept.
 * The record goes first with its listing entry and count, in one transaction, so a listing never counts
 * a run it cannot show; its step results after (nothing reads them once the record is gone).
 */
async function deleteRun(state: StateClient, run: StoredRun, version: number): Promise<boolean> {
  const index = runIndexEntry(run);
  const ops: BatchOp[] = [{ type: "delete", scope: RUNS_SCOPE, key: run.runId, expectedVersion: version }];
  // The count goes down only with an entry that is there (a purge cut short may have taken it already).
  if (await state.get(index.scope, index.key)) {
    ops.push(
      { type: "delete", scope: index.scope, key: index.key },
      {
        type: "update",
        scope: index.countScope,
        key: index.countKey,
        ops: [{ type: "decrement", path: "count", by: 1 }],
      },
    );
  }
  try {
    await state.batch(ops);
  } catch (error) {
    if (isConflict(error)) return false;
    throw error;
  }
  const steps = stepsScope(run.runId);
  let keys: string[] = [];
  do {
    keys = (await state.list(steps, { limit: STEP_DELETES })).items.map((item) => item.key);
    if (keys.length > 0)
      await state.batch(keys.map((key) => ({ type: "delete" as const, scope: steps, key })));
  } while (keys.length === STEP_DELETES);
  return true;
}
