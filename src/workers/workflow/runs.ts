import { casUpdate } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { InvocationContext, TriggerFn } from "../../engine/types.ts";
import { callerRealm } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { AppError, conflict, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { requireRealm } from "../../shared/realm-refs.ts";
import type { RealmRunShare } from "../../shared/realm-share.ts";
import { assertStepsAllowed, runPrincipal } from "./access.ts";
import { type Drain, shuttingDown } from "./drain.ts";
import { type ExecutorDeps, executeRun } from "./executor.ts";
import type { FunctionInfo } from "./function-info.ts";
import { hold, type Leases } from "./lease.ts";
import { assertNestable, chainOf } from "./nesting.ts";
import type { Run, RunPrincipal, RunStatus, Workflow } from "./schema.ts";
import {
  ACTIVE_SCOPE,
  loadRun,
  loadWorkflow,
  RUNS_SCOPE,
  recentWorkflow,
  requireWorkflow,
  runRealm,
  type StoredRun,
  startRun,
} from "./store.ts";
import { missingFunctions } from "./validate.ts";

/** What starting, cancelling and retrying runs share: the executor and the runs this process executes. */
export interface RunControl {
  deps: ExecutorDeps;
  state: StateClient;
  trigger: TriggerFn;
  leases?: Leases;
  /** Runs executing here (or about to resume here), each with the controller that cancels it. */
  local: Map<string, { controller: AbortController; done?: Promise<unknown> }>;
  /** Asynchronous runs of realm keys executing here, per realm: they hold no request's slot. */
  asyncRuns: RealmRunShare;
  /** The capability check of the agents a run's steps act for (403 naming the step). */
  authorize(workflow: Workflow, agentId: string | undefined, principal: RunPrincipal): Promise<void>;
  functionInfo: FunctionInfo;
  /** How deep workflows may nest, a run started by a step of a run counting one level more. */
  maxDepth: number;
  /** Set on shutdown: runs stop between steps, to be handed over (handover.ts). */
  drain: Drain;
}

/** The cancel handle of a run about to execute here (a resumed run holds it while it waits). */
export function claimLocal(control: RunControl, runId: string): AbortSignal {
  const entry = control.local.get(runId) ?? { controller: new AbortController() };
  control.local.set(runId, entry);
  return entry.controller.signal;
}

/**
 * Executes a run here, cancellable by its id; its lease (cluster mode) is let go when it ends. An
 * `awaited` run (a synchronous caller waits for its outcome: a request, or a step of another run) runs
 * on through a shutdown: stopped between steps, it would hand its caller a run still running as if done.
 */
export function execute(control: RunControl, workflow: Workflow, run: Run, awaited = false): Promise<Run> {
  const signal = claimLocal(control, run.runId);
  const deps = awaited ? { ...control.deps, handingOver: undefined } : control.deps;
  const done = executeRun(deps, workflow, run, signal)
    .then((ended) => {
      // Still running: it stopped between two steps because this process shuts down.
      if (ended.status === "running") control.drain.parked.set(ended.runId, ended);
      return ended;
    })
    .finally(() => {
      control.local.delete(run.runId);
      control.leases?.local.delete(run.runId);
    });
  const entry = control.local.get(run.runId);
  if (entry) entry.done = done.catch(() => undefined);
  return done;
}

export interface StartRequest {
  workflowId: string;
  realmId?: string;
  input?: unknown;
  agentId?: string;
  async?: boolean;
}

/** A new run: synchronous (the finished run) or, with `async`, `{runId, status}` at once (a 202). */
export async function startWorkflowRun(control: RunControl, request: StartRequest, ctx: InvocationContext) {
  const { workflowId, input, agentId } = request;
  const realmId = callerRealm(ctx, request.realmId);
  if (control.drain.active) throw shuttingDown();
  const chain = chainOf(ctx);
  assertNestable(chain, workflowId, control.maxDepth);
  // A cluster node must see another node's update at once; a single process sees its own writes anyway.
  const workflow = control.leases
    ? await requireWorkflow(control.state, realmId, workflowId)
    : await recentWorkflow(control.state, realmId, workflowId);
  const principal = runPrincipal(ctx.auth, workflow.author, realmId);
  await assertStepsAllowed(workflow.steps, principal, "run", control.functionInfo);
  await requireRealm(control.trigger, realmId, { write: true });
  await control.authorize(workflow, agentId, principal);
  const run: Run = {
    runId: newId("run"),
    workflowId,
    workflowVersion: workflow.version,
    realmId,
    principal,
    status: "running",
    input: input ?? null,
    ...(agentId ? { agentId } : {}),
    ...(chain.length > 0 ? { chain } : {}),
    results: [],
    vars: { input: input ?? null },
    position: 0,
    startedAt: nowIso(),
  };
  // A realm key's asynchronous run answers at once, so no request slot holds it: its realm's share does.
  const shared = request.async && ctx.auth.kind === "realm" ? realmId : undefined;
  if (shared !== undefined && !control.asyncRuns.tryEnter(shared))
    throw tooManyRuns(realmId, control.asyncRuns);
  const leave = () => {
    if (shared !== undefined) control.asyncRuns.leave(shared);
  };
  if (control.leases) hold(control.leases, run);
  try {
    await startRun(control.state, run);
  } catch (error) {
    control.leases?.local.delete(run.runId);
    leave();
    throw error;
  }
  control.deps.publish("started", run);
  const done = execute(control, workflow, run, !request.async);
  if (request.async) {
    done.catch(() => undefined).finally(leave);
    return { runId: run.runId, status: run.status, workflowId, realmId };
  }
  const finished = await done;
  return { runId: finished.runId, status: finished.status, results: finished.results, vars: finished.vars };
}

function tooManyRuns(realmId: string, share: RealmRunShare): AppError {
  return new AppError(
    "rate_limited",
    `Realm ${realmId} has ${share.limit} asynchronous workflow runs going, the most it may at once (AGENTOS_WORKFLOW_RUNS_PER_REALM): start this one when one has finished`,
  );
}

/** A run the caller may see: another realm's run is as absent as one that never existed. */
export async function visibleRun(state: StateClient, runId: string, ctx: InvocationContext): Promise<Run> {
  const run = await loadRun(state, runId);
  if (!run || (ctx.auth.kind === "realm" && ctx.auth.realmId !== runRealm(run))) {
    throw notFound(`Run ${runId} not found`);
  }
  callerRealm(ctx, runRealm(run));
  return run;
}

/**
 * Stops a running run: here, by aborting its controller (the running step's invocation sees the
 * abort) and waiting for it to record `cancelled`; leased to another node (cluster mode), by a flag its
 * owner acts on at its next lease tick or checkpoint (or the node taking it over, if the owner died); a
 * run no other node holds is marked cancelled at once.
 */
export async function cancelRun(control: RunControl, runId: string, ctx: InvocationContext) {
  const run = await visibleRun(control.state, runId, ctx);
  if (run.status !== "running") throw notRunning(run, "cancelled");
  await requireRealm(control.trigger, runRealm(run), { write: true });
  const local = control.local.get(runId);
  local?.controller.abort();
  if (local?.done) {
    await local.done;
    return summary(await visibleRun(control.state, runId, ctx));
  }
  // Not executing here: waiting here to resume, on another node, or left by a dead one.
  let stoppedHere = false;
  await casUpdate<StoredRun>(control.state, RUNS_SCOPE, runId, ({ value }) => {
    if (value?.status !== "running")
      throw notRunning({ runId, status: value?.status ?? "gone" }, "cancelled");
    const elsewhere = !local && leasedElsewhere(control, value);
    stoppedHere = !elsewhere;
    if (elsewhere) return { ...value, cancelRequested: true };
    return { ...value, status: "cancelled", cancelRequested: true, error: "Cancelled", finishedAt: nowIso() };
  });
  if (stoppedHere) {
    await control.state.delete(ACTIVE_SCOPE, runId);
    control.deps.publish("cancelled", { ...run, status: "cancelled" });
  }
  return summary(await visibleRun(control.state, runId, ctx));
}

/**
 * Cluster mode: the run is leased to another node. Whether that node still lives is not judged here:
 * that would compare the owner's wall clock (its `leaseUntil`) with this node's, and a node whose clock
 * runs ahead would cancel live runs under their owner. The flag reaches the owner at its next lease tick
 * or checkpoint, or, if it died, the node that takes the run over (which ends it cancelled).
 */
function leasedElsewhere(control: RunControl, run: StoredRun): boolean {
  return control.leases !== undefined && run.owner !== undefined && run.owner !== control.leases.nodeId;
}

/**
 * Resumes a failed, interrupted or cancelled run from its last checkpoint in the background: completed
 * steps are kept, the step it stopped at runs again. The workflow must still be the version the run
 * started with (a changed definition would not match the stored results). Of two concurrent retries,
 * one wins; the other is a 409.
 */
export async function retryRun(control: RunControl, runId: string, ctx: InvocationContext) {
  const run = await visibleRun(control.state, runId, ctx);
  const realmId = runRealm(run);
  if (!RETRYABLE.includes(run.status)) throw notRunning(run, "retried");
  if (control.drain.active) throw shuttingDown();
  const workflow = await loadWorkflow(control.state, realmId, run.workflowId);
  if (!workflow) throw conflict(`Run ${runId} cannot be retried: workflow ${run.workflowId} was deleted`);
  if (run.workflowVersion !== undefined && run.workflowVersion !== workflow.version) {
    throw conflict(
      `Run ${runId} cannot be retried: workflow ${workflow.id} changed since it started (version ${run.workflowVersion}, now ${workflow.version}); start a new run`,
    );
  }
  const principal = runPrincipal(ctx.auth, workflow.author, realmId);
  await assertStepsAllowed(workflow.steps, principal, "run", control.functionInfo);
  await requireRealm(control.trigger, realmId, { write: true });
  await control.authorize(workflow, run.agentId, principal);
  const missing = await missingFunctions(control.trigger, workflow.steps.slice(run.position));
  if (missing.length > 0) {
    throw conflict(`Run ${runId} cannot be retried yet: ${missing.join(", ")} is not registered`);
  }
  const resumed: Run = { ...run, status: "running", principal, retries: (run.retries ?? 0) + 1 };
  for (const field of ["error", "stoppedAt", "failedAt", "finishedAt", "cancelRequested"] as const) {
    delete resumed[field];
  }
  if (control.leases) hold(control.leases, resumed);
  const { results: _results, ...record } = resumed;
  await casUpdate<StoredRun>(control.state, RUNS_SCOPE, runId, ({ value }) => {
    if (value?.status !== run.status) throw notRunning({ runId, status: value?.status ?? "gone" }, "retried");
    return { ...record, resultCount: value.resultCount };
  }).catch((error: unknown) => {
    control.leases?.local.delete(runId);
    throw error;
  });
  await control.state.set(ACTIVE_SCOPE, runId, { workflowId: run.workflowId });
  control.deps.publish("started", resumed);
  execute(control, workflow, resumed).catch(() => undefined);
  return summary(resumed);
}

const RETRYABLE: RunStatus[] = ["failed", "interrupted", "cancelled"];

function notRunning(run: { runId: string; status: string }, doing: "cancelled" | "retried") {
  const allowed = doing === "cancelled" ? "a running run" : "a failed, interrupted or cancelled run";
  return conflict(`Run ${run.runId} is ${run.status}: only ${allowed} can be ${doing}`);
}

/** What cancel and retry answer: where the run stands. */
export function summary(run: Run) {
  return {
    runId: run.runId,
    workflowId: run.workflowId,
    realmId: runRealm(run),
    status: run.status,
    position: run.position,
    completedSteps: run.results.length,
    ...(run.stoppedAt ? { stoppedAt: run.stoppedAt } : {}),
    ...(run.error ? { error: run.error } : {}),
    ...(run.cancelRequested && run.status === "running" ? { cancelRequested: true as const } : {}),
    ...(run.retries ? { retries: run.retries } : {}),
  };
}
