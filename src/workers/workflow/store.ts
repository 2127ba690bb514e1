import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import { RecentReads } from "../../engine/state/watch.ts";
import { DEFAULT_REALM_ID } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { AppError, conflict, notFound } from "../../shared/errors.ts";
import { newestFirstKey } from "../../shared/pagination.ts";
import { RunCancelled } from "./executor.ts";
import type { Run, Workflow } from "./schema.ts";

export const RUNS_SCOPE = "workflow_runs";
/** Runs not finished yet, by id: what a restart looks at (never a scan of every run). */
export const ACTIVE_SCOPE = "workflow_runs_active";
const COUNTS_SCOPE = "workflow_run_counts";

/**
 * One scope of definitions per realm, so a listing reads only its realm and a purge deletes only it. The
 * default realm keeps the names used before workflows had realms (`workflows`, bare workflow ids), so
 * stored workflows and their run histories stay where they were.
 */
export const workflowsScope = (realmId: string) =>
  realmId === DEFAULT_REALM_ID ? "workflows" : `workflows:${realmId}`;
/** Ids of deleted workflows whose runs are kept: a realm delete purges those runs too. */
export const deletedScope = (realmId: string) => `workflows_deleted:${realmId}`;
/** A workflow's name across realms (`/` is in neither realm nor workflow ids). */
const qualified = (realmId: string, workflowId: string) =>
  realmId === DEFAULT_REALM_ID ? workflowId : `${realmId}/${workflowId}`;
const indexScope = (realmId: string, workflowId: string) =>
  `workflow_run_index:${qualified(realmId, workflowId)}`;
/** A run's realm: runs stored before realms existed belong to the default one. */
export const runRealm = (run: Pick<Run, "realmId">) => run.realmId ?? DEFAULT_REALM_ID;
/** Step results, one record each, so a checkpoint writes one result and not the whole history again. */
export const stepsScope = (runId: string) => `workflow_run_steps:${runId}`;
const stepKey = (index: number) => String(index).padStart(6, "0");

/**
 * The stored record: the run without its results (they are in the steps scope), plus how many there are.
 * `released` (cluster mode, no owner then): its node shut down between two steps and let it go, so any
 * live node takes it over at once instead of after a lapsed lease (see handover.ts).
 */
export type StoredRun = Omit<Run, "results"> & { resultCount: number; released?: true };

/** How many of a live run's results are already stored (runs are checkpointed by the process running them). */
const storedResults = new WeakMap<Run, number>();
/**
 * Runs started by this process: no step result of theirs can be stored beyond their count (each
 * checkpoint writes results and record together), so new results are create-only writes, which need
 * no read first. A run loaded from storage may have older, uncounted results: it overwrites them.
 */
const startedHere = new WeakSet<Run>();
/** The version of a live run's record this process last wrote (cluster checkpoints write on it unread). */
const storedVersions = new WeakMap<Run, number>();

/** The version of a live run's record this process last wrote, if it knows it. */
export function knownVersion(run: Run): number | undefined {
  return storedVersions.get(run);
}

/**
 * Notes a version this process wrote outside a checkpoint (a lease renewal). Never goes back: of two
 * writes answered out of order, the later one's version stays.
 */
export function rememberVersion(run: Run, version: number): void {
  if (version > (storedVersions.get(run) ?? 0)) storedVersions.set(run, version);
}

/** Index keys sort newest first: the start time counted down, then the id. */
const indexKey = (run: Pick<Run, "startedAt" | "runId">) => newestFirstKey(run.startedAt, run.runId);

/** Where a run is listed and counted (what deleting it one by one, as the retention does, updates). */
export function runIndexEntry(run: Pick<Run, "realmId" | "workflowId" | "startedAt" | "runId">) {
  const realmId = runRealm(run);
  return {
    scope: indexScope(realmId, run.workflowId),
    key: indexKey(run),
    countScope: COUNTS_SCOPE,
    countKey: qualified(realmId, run.workflowId),
  };
}

/**
 * A stored workflow with the fields records written before realms and versions lack: those belong to the
 * default realm, version 1, and count as written by a realm-bound author (their writer is unknown, so a
 * run gets no admin rights through them until an admin saves them again).
 */
export function normalizeWorkflow(
  stored: Partial<Workflow> & Pick<Workflow, "id" | "name" | "steps">,
): Workflow {
  const realmId = stored.realmId ?? DEFAULT_REALM_ID;
  const createdAt = stored.createdAt ?? new Date(0).toISOString();
  return {
    ...stored,
    realmId,
    version: stored.version ?? 1,
    author: stored.author ?? { kind: "realm", keyId: "unknown", realmId },
    createdAt,
    updatedAt: stored.updatedAt ?? createdAt,
  };
}

export async function loadWorkflow(
  state: StateClient,
  realmId: string,
  id: string,
): Promise<Workflow | null> {
  const stored = await state.get<Workflow>(workflowsScope(realmId), id);
  return stored ? normalizeWorkflow(stored) : null;
}

/** The workflow, or a 404 naming it and its realm. */
export async function requireWorkflow(state: StateClient, realmId: string, id: string): Promise<Workflow> {
  const workflow = await loadWorkflow(state, realmId, id);
  if (!workflow) throw notFound(`Workflow ${id} not found in realm ${realmId}`);
  return workflow;
}

/**
 * Definitions as this process read them to start runs (one state read less per run): answered again
 * until this process writes the realm's definitions scope (an update, a delete, a purge) or
 * WORKFLOW_READ_TTL_MS pass, the bound for a write by another process on the same file, as for realm
 * records. Only missing workflows are read every time, so a new one is found at once. Embedded mode only:
 * in a cluster another node's update must be seen by the next run here.
 */
const WORKFLOW_READ_TTL_MS = 1000;
const recentWorkflows = new RecentReads<StateClient, Workflow>(WORKFLOW_READ_TTL_MS);

/** A workflow to start a run of (404 when missing); the returned definition is shared: never change it. */
export function recentWorkflow(state: StateClient, realmId: string, id: string): Promise<Workflow> {
  return recentWorkflows.read(state, workflowsScope(realmId), id, () => requireWorkflow(state, realmId, id));
}

export async function listWorkflows(state: StateClient, realmId: string): Promise<Workflow[]> {
  const workflows: Workflow[] = [];
  for await (const record of state.scan<Workflow>(workflowsScope(realmId))) {
    workflows.push(normalizeWorkflow(record.value));
  }
  return workflows;
}

/**
 * A new run: its record, its place in the workflow's newest-first index, the count, and the active set,
 * in one transaction (one call, one commit: a short run's fixed cost).
 */
export async function startRun(state: StateClient, run: Run): Promise<void> {
  const realmId = runRealm(run);
  const [record] = await state.batch([
    { type: "set", scope: RUNS_SCOPE, key: run.runId, value: stored(run), expectedVersion: 0 },
    // A new run's keys are new: create-only writes need no read of what was there.
    {
      type: "set",
      scope: ACTIVE_SCOPE,
      key: run.runId,
      value: { workflowId: run.workflowId },
      expectedVersion: 0,
    },
    {
      type: "set",
      scope: indexScope(realmId, run.workflowId),
      key: indexKey(run),
      value: { runId: run.runId },
      expectedVersion: 0,
    },
    {
      type: "update",
      scope: COUNTS_SCOPE,
      key: qualified(realmId, run.workflowId),
      ops: [{ type: "increment", path: "count", by: 1 }],
    },
  ]);
  if (record) storedVersions.set(run, record.version);
  startedHere.add(run);
}

/**
 * The checkpoint: the step results not stored yet and the record, in one transaction; a finished run
 * leaves the active set in the same one.
 */
export async function saveRun(state: StateClient, run: Run): Promise<void> {
  // Each checkpoint also says the run's node is alive (cluster mode resumes only quiet runs).
  run.heartbeatAt = nowIso();
  // On the version this process last wrote (no read needed): a record deleted meanwhile (its realm or
  // workflow purged while the step ran) is not written back, with the step's results, after the purge.
  const known = storedVersions.get(run);
  const ops = checkpointOps(run, known);
  let results: Awaited<ReturnType<StateClient["batch"]>>;
  try {
    results = await state.batch(ops);
  } catch (error) {
    if (known !== undefined && isConflict(error)) throw runGone(run.runId);
    throw error;
  }
  storedResults.set(run, run.results.length);
  const record = results[ops.findIndex((op) => op.scope === RUNS_SCOPE)];
  if (record && known !== undefined) storedVersions.set(run, record.version);
}

/** The run's record changed under it (deleted with its realm): the run stops, writing nothing more. */
function runGone(runId: string): AppError {
  return conflict(`Run ${runId} was deleted while it ran (its realm or its runs were deleted)`);
}

/** The writes of a checkpoint: new step results, the record (`expectedVersion` if given), the active set. */
function checkpointOps(run: Run, expectedVersion?: number): BatchOp[] {
  const from = storedResults.get(run) ?? 0;
  const ops: BatchOp[] = [];
  const created = startedHere.has(run) ? { expectedVersion: 0 } : {};
  for (let index = from; index < run.results.length; index++) {
    const value = run.results[index];
    ops.push({ type: "set", scope: stepsScope(run.runId), key: stepKey(index), value, ...created });
  }
  ops.push({
    type: "set",
    scope: RUNS_SCOPE,
    key: run.runId,
    value: stored(run),
    ...(expectedVersion === undefined ? {} : { expectedVersion }),
  });
  if (run.status !== "running") ops.push({ type: "delete", scope: ACTIVE_SCOPE, key: run.runId });
  return ops;
}

/**
 * The checkpoint of a run leased to this node (cluster mode): new step results and the record in one
 * transaction, written only while the record still names this node as the run's owner, so a node that
 * lost its run to another never writes over the new owner's progress. The lease is extended with it.
 */
export async function saveOwnedRun(state: StateClient, run: Run, leaseMs: number): Promise<void> {
  const owner = run.owner;
  // The version this node last wrote: a write conditional on it needs no read first. Anyone writing in
  // between (a lease renewal, a cancel, a take-over) makes it a conflict, and the record is read again.
  let known = storedVersions.get(run);
  for (let attempt = 0; attempt < 16; attempt++) {
    if (known === undefined) {
      const current = await state.getVersioned<StoredRun>(RUNS_SCOPE, run.runId);
      if (!current || current.value.owner !== owner) throw leaseLost(run.runId);
      // Cancelled on another node: this node stops here (the next checkpoint records it as cancelled).
      // A run about to complete stops too, as it did when its last step had a checkpoint of its own.
      if (current.value.cancelRequested && (run.status === "running" || run.status === "completed")) {
        throw new RunCancelled();
      }
      known = current.version;
    }
    run.heartbeatAt = nowIso();
    run.leaseUntil = new Date(Date.now() + leaseMs).toISOString();
    const ops = checkpointOps(run, known);
    try {
      const results = await state.batch(ops);
      storedResults.set(run, run.results.length);
      const record = results[ops.findIndex((op) => op.scope === RUNS_SCOPE)];
      if (record) storedVersions.set(run, record.version);
      return;
    } catch (error) {
      // Written in between: read again (and give up if the run changed hands).
      if (!isConflict(error)) throw error;
      known = undefined;
      storedVersions.delete(run);
    }
  }
  throw leaseLost(run.runId);
}

export function leaseLost(runId: string): AppError {
  return new AppError("conflict", `Run ${runId} was taken over by another node`, { reason: "lease_lost" });
}

function stored(run: Run): StoredRun {
  const { results, ...rest } = run;
  return { ...rest, resultCount: results.length };
}

/** A run with its step results, in order. */
export async function loadRun(state: StateClient, runId: string): Promise<Run | null> {
  const record = await state.get<StoredRun>(RUNS_SCOPE, runId);
  if (!record) return null;
  const { resultCount, released: _released, ...rest } = record;
  const results: Run["results"] = [];
  for await (const item of state.scan<Run["results"][number]>(stepsScope(runId))) {
    if (results.length < resultCount) results.push(item.value);
  }
  const run: Run = { ...rest, results };
  storedResults.set(run, results.length);
  return run;
}

/** Newest first, `limit` from `offset`, with the total: cost grows with offset + limit, not with all runs. */
export async function listRuns(
  state: StateClient,
  realmId: string,
  workflowId: string,
  limit: number,
  offset: number,
): Promise<{ runs: Run[]; total: number }> {
  const counted = await state.get<{ count?: number }>(COUNTS_SCOPE, qualified(realmId, workflowId));
  const ids: string[] = [];
  let skipped = 0;
  let cursor: string | undefined;
  do {
    const page = await state.list<{ runId: string }>(indexScope(realmId, workflowId), {
      limit: Math.min(1000, offset - skipped + limit),
      cursor,
    });
    for (const item of page.items) {
      if (skipped < offset) skipped++;
      else if (ids.length < limit) ids.push(item.value.runId);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor && ids.length < limit);
  const runs = await Promise.all(ids.map((id) => loadRun(state, id)));
  return { runs: runs.filter((run): run is Run => run !== null), total: counted?.count ?? 0 };
}

/** Every workflow of a realm with its runs, step results, indexes and counts (a realm delete); idempotent. */
export async function purgeWorkflows(state: StateClient, realmId: string): Promise<number> {
  let purged = 0;
  for (const scope of [workflowsScope(realmId), deletedScope(realmId)]) {
    // Keys first, deletes after: deleting while paging would move the cursor's ground under it.
    const ids: string[] = [];
    for await (const { key } of state.scan(scope)) ids.push(key);
    for (const id of ids) {
      await purgeRuns(state, realmId, id);
      await state.delete(scope, id);
    }
    if (scope === workflowsScope(realmId)) purged = ids.length;
  }
  return purged;
}

/** A workflow that exists, or existed and left runs behind. */
export async function hadWorkflow(state: StateClient, realmId: string, id: string): Promise<boolean> {
  return (
    (await state.get(workflowsScope(realmId), id)) !== null ||
    (await state.get(deletedScope(realmId), id)) !== null
  );
}

/** A workflow's runs and what indexes them. */
export async function purgeRuns(state: StateClient, realmId: string, workflowId: string): Promise<void> {
  const index = indexScope(realmId, workflowId);
  const entries: Array<{ key: string; runId: string }> = [];
  for await (const item of state.scan<{ runId: string }>(index)) {
    entries.push({ key: item.key, runId: item.value.runId });
  }
  for (const { key, runId } of entries) {
    const steps: string[] = [];
    for await (const item of state.scan(stepsScope(runId))) steps.push(item.key);
    for (const step of steps) await state.delete(stepsScope(runId), step);
    await state.delete(ACTIVE_SCOPE, runId);
    await state.delete(RUNS_SCOPE, runId);
    await state.delete(index, key);
  }
  await state.delete(COUNTS_SCOPE, qualified(realmId, workflowId));
}
