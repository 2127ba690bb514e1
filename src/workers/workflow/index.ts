import { z } from "zod";
import { publishEvent } from "../../engine/events.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { callerRealm, DEFAULT_REALM_ID, requireAdmin } from "../../shared/access.ts";
import { pageOf } from "../../shared/pagination.ts";
import { RealmRunShare } from "../../shared/realm-share.ts";
import { registerRetention } from "../../shared/retention.ts";
import { authorize } from "./authorize.ts";
import { checkWorkflowFiles } from "./check-file.ts";
import {
  createWorkflow,
  deleteWorkflow,
  getWorkflow,
  loadFileWorkflows,
  updateWorkflow,
} from "./definitions.ts";
import { createDrain } from "./drain.ts";
import { runEvents } from "./events.ts";
import type { ExecutorDeps } from "./executor.ts";
import { loadWorkflowFiles } from "./files.ts";
import { functionInfoCache } from "./function-info.ts";
import { handOver } from "./handover.ts";
import { createLeases, type Leases, renewLeases, tickSeconds } from "./lease.ts";
import { DEFAULT_MAX_WORKFLOW_DEPTH } from "./nesting.ts";
import { resumeRuns } from "./resume.ts";
import { sweepRuns } from "./retention.ts";
import { cancelRun, type RunControl, retryRun, startWorkflowRun, visibleRun } from "./runs.ts";
import {
  filesChecked,
  filesLoaded,
  listInput,
  purgeInput,
  runIdInput,
  runInput,
  runPage,
  runRecord,
  runStarted,
  runSummary,
  runsInput,
  updateInput,
  workflowCreated,
  workflowDeleted,
  workflowIdInput,
  workflowInput,
  workflowPage,
  workflowRecord,
  workflowWithMissing,
} from "./schema.ts";
import { hadWorkflow, listRuns, listWorkflows, purgeWorkflows, saveOwnedRun, saveRun } from "./store.ts";
import { reportRunEvent } from "./telemetry.ts";
import { missingFunctions } from "./validate.ts";

export interface WorkflowOptions {
  /** Directory whose `workflows/*.yaml` are loaded at start (the working directory by default). */
  directory?: string;
  /** Base of the exponential retry backoff, in ms (default 200: 200, 400, 800, ...). */
  retryBaseMs?: number;
  /**
   * Cluster mode: each run is leased to the node executing it, renewed while it runs; a live node takes
   * over a run whose lease lapsed (its node died), resuming from the last checkpoint.
   */
  cluster?: boolean;
  /** Length of a run's lease in cluster mode (default 15 s; renewed three times per lease). */
  leaseMs?: number;
  /** How long a resumed run waits for its steps' functions (remote workers reconnecting). */
  resumeGraceMs?: number;
  /**
   * False in a process that does no background work (a CLI command): no start-up work at all, neither
   * `workflows/*.yaml` of the working directory loaded nor runs left running resumed, since those belong
   * to the process that serves the data. Default true.
   */
  startup?: boolean;
  /** Asynchronous runs of one realm's keys executing at once in this process (default 32). */
  runsPerRealm?: number;
  /** How deep workflows may nest: a step running a workflow is one level down (default 8). */
  maxDepth?: number;
  /** Days a finished run is kept (AGENTOS_WORKFLOW_RUN_RETENTION_DAYS); 0 or unset: forever. */
  retentionDays?: number;
  /**
   * Registers the clean-shutdown hook, called with the shutdown's deadline (this process's clock)
   * before workers and storage close: runs stop between steps and (cluster mode) are released to the
   * other nodes (handover.ts).
   */
  onStopping?: (hook: (deadline: number) => Promise<void>) => void;
  warn?: (message: string) => void;
}

const DEFAULT_RUNS_PER_REALM = 32;
/** Of the shutdown's grace, what the wait for steps in flight leaves for the releases and the rest. */
const RELEASE_MARGIN_MS = 2_000;

/** Durable workflows: definitions, runs checkpointed after every step, resumed after a crash. */
export function registerWorkflow(
  worker: WorkerClient,
  options: WorkflowOptions = {},
): { resumed: Promise<number> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const functionInfo = functionInfoCache(trigger);
  const leases = options.cluster ? createLeases(options.leaseMs) : undefined;
  const drain = createDrain();
  const warn = options.warn ?? (() => undefined);
  const deps: ExecutorDeps = {
    trigger,
    checkpoint: (run) => (leases ? saveOwnedRun(state, run, leases.leaseMs) : saveRun(state, run)),
    publish: (event, run, step) => {
      reportRunEvent(trigger, event, run, step);
      publishEvent(trigger, "workflow.run", {
        event,
        runId: run.runId,
        workflowId: run.workflowId,
        status: run.status,
        ...(step ? { step } : {}),
      });
    },
    retryDelayMs: (attempt) => Math.min((options.retryBaseMs ?? 200) * 2 ** attempt, 30_000),
    inputFields: async (functionId) => (await functionInfo(functionId)).fields,
    handingOver: () => drain.active,
  };

  const defs = { state, trigger, functionInfo };
  const control: RunControl = {
    deps,
    state,
    trigger,
    leases,
    local: new Map(),
    asyncRuns: new RealmRunShare(options.runsPerRealm ?? DEFAULT_RUNS_PER_REALM),
    authorize: (workflow, agentId, principal) => authorize(worker, workflow, agentId, principal),
    functionInfo,
    maxDepth: options.maxDepth ?? DEFAULT_MAX_WORKFLOW_DEPTH,
    drain,
  };
  options.onStopping?.(async (deadline) => {
    const { inFlight } = await handOver(control, deadline - RELEASE_MARGIN_MS);
    if (inFlight > 0 && leases) {
      warn(
        `${inFlight} workflow run(s) still had a step in flight at shutdown: another node takes them over once their lease lapses`,
      );
    }
  });

  worker.registerFunction(
    {
      id: "workflow::create",
      description:
        "Store a new workflow definition in a realm (an existing id is a 409); returns {id, version}",
      input: workflowInput,
      output: workflowCreated,
    },
    async (input, ctx) => {
      const workflow = await createWorkflow(defs, callerRealm(ctx, input.realmId), input, ctx.auth);
      return { id: workflow.id, realmId: workflow.realmId, version: workflow.version };
    },
  );

  worker.registerFunction(
    {
      id: "workflow::get",
      description:
        "One workflow definition, with missingFunctions: optional steps' functions not registered now",
      input: workflowIdInput,
      output: workflowWithMissing,
    },
    async ({ id, realmId }, ctx) => {
      const workflow = await getWorkflow(defs, callerRealm(ctx, realmId), id);
      return { ...workflow, missingFunctions: await missingFunctions(trigger, workflow.steps) };
    },
  );

  worker.registerFunction(
    {
      id: "workflow::update",
      description: "Change a workflow (name, description, steps); the version goes up by one",
      input: updateInput,
      output: workflowRecord,
    },
    async (input, ctx) => updateWorkflow(defs, callerRealm(ctx, input.realmId), input, ctx.auth),
  );

  worker.registerFunction(
    {
      id: "workflow::delete",
      description: "Delete a workflow and its run history",
      input: workflowIdInput,
      output: workflowDeleted,
    },
    async ({ id, realmId }, ctx) => {
      const workflow = await deleteWorkflow(defs, callerRealm(ctx, realmId), id);
      return { deleted: true, id: workflow.id, realmId: workflow.realmId };
    },
  );

  worker.registerFunction(
    {
      id: "workflow::list",
      description: "A realm's workflow definitions by id: {workflows, nextCursor} (the route: a bare array)",
      input: listInput,
      output: workflowPage,
    },
    async ({ realmId, limit, cursor }, ctx) => {
      const workflows = await listWorkflows(state, callerRealm(ctx, realmId));
      const page = pageOf(workflows, (workflow) => workflow.id, { limit, cursor });
      return { workflows: page.items, nextCursor: page.nextCursor };
    },
  );

  worker.registerFunction(
    {
      id: "workflow::run",
      description:
        "Run a workflow: {runId, status, results, vars}; with async: true, {runId, status} at once (202)",
      input: runInput,
      output: runStarted,
    },
    (input, ctx) => startWorkflowRun(control, input, ctx),
  );

  worker.registerFunction(
    {
      id: "workflow::cancel",
      description: "Cancel a running run: its running step is aborted and the run ends cancelled",
      input: runIdInput,
      output: runSummary,
    },
    ({ runId }, ctx) => cancelRun(control, runId, ctx),
  );

  worker.registerFunction(
    {
      id: "workflow::retry",
      description:
        "Resume a failed, interrupted or cancelled run from its last checkpoint, in the background",
      input: runIdInput,
      output: runSummary,
    },
    ({ runId }, ctx) => retryRun(control, runId, ctx),
  );

  worker.registerFunction(
    {
      id: "workflow::run_events",
      description: "A run's progress as server-sent events (status, step, then the final status)",
    },
    async (envelope, ctx) => {
      const runId = String((envelope as { path_params?: { runId?: unknown } }).path_params?.runId ?? "");
      await visibleRun(state, runId, ctx);
      return {
        status_code: 200,
        headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
        body: runEvents(state, runId),
      };
    },
  );

  worker.registerFunction(
    {
      id: "workflow::runs",
      description: "A workflow's runs, newest first: {runs, total, limit, offset}",
      input: runsInput,
      output: runPage,
    },
    async ({ id, realmId: named, limit, offset }, ctx) => {
      const realmId = callerRealm(ctx, named);
      // A deleted workflow's runs stay listed under its id.
      if (!(await hadWorkflow(state, realmId, id))) await getWorkflow(defs, realmId, id);
      return { ...(await listRuns(state, realmId, id, limit, offset)), limit, offset };
    },
  );

  worker.registerFunction(
    {
      id: "workflow::get_run",
      description: "One run with its step history",
      input: runIdInput,
      output: runRecord,
    },
    ({ runId }, ctx) => visibleRun(state, runId, ctx),
  );

  worker.registerFunction(
    {
      id: "workflow::purge_realm",
      description: "Delete every workflow of a realm with its runs (part of a realm delete); idempotent",
      input: purgeInput,
    },
    async ({ realmId }, ctx) => {
      requireAdmin(ctx);
      return { purged: await purgeWorkflows(state, realmId) };
    },
  );

  worker.registerRoute("workflow::list", "GET", "/api/workflows", { array_list: "workflows" });
  worker.registerRoute("workflow::create", "POST", "/api/workflows", { status: 201 });
  worker.registerRoute("workflow::run", "POST", "/api/workflows/run", { accepted_field: "async" });
  worker.registerRoute("workflow::cancel", "POST", "/api/workflows/runs/:runId/cancel");
  worker.registerRoute("workflow::retry", "POST", "/api/workflows/runs/:runId/retry", { status: 202 });
  worker.registerRoute("workflow::run_events", "GET", "/api/workflows/runs/:runId/events", {
    envelope: true,
    answers: "text/event-stream",
  });
  worker.registerFunction(
    {
      id: "workflow::load_files",
      description:
        "Read workflows/*.yaml of a directory into the default realm (admin): {loaded, unchanged, problems}",
      input: z.strictObject({ directory: z.string().min(1).max(4096) }),
      output: filesLoaded,
    },
    async ({ directory }, ctx) => {
      requireAdmin(ctx);
      const problems: Array<{ file: string; message: string }> = [];
      const warn = (file: string, message: string) => problems.push({ file, message });
      const files = loadWorkflowFiles(directory, (message) => problems.push({ file: directory, message }));
      return { ...(await loadFileWorkflows(defs, DEFAULT_REALM_ID, files, warn)), problems };
    },
  );
  worker.registerFunction(
    {
      id: "workflow::check_files",
      description:
        "Check workflows/*.yaml of a directory without loading them (admin; config::validate): {workflows, problems}",
      input: z.strictObject({ directory: z.string().min(1).max(4096) }),
      output: filesChecked,
    },
    ({ directory }, ctx) => {
      requireAdmin(ctx);
      return checkWorkflowFiles(directory);
    },
  );
  worker.registerRoute("workflow::get", "GET", "/api/workflows/:id");
  worker.registerRoute("workflow::update", "PATCH", "/api/workflows/:id");
  worker.registerRoute("workflow::delete", "DELETE", "/api/workflows/:id");
  worker.registerRoute("workflow::runs", "GET", "/api/workflows/:id/runs");
  worker.registerRoute("workflow::get_run", "GET", "/api/workflows/runs/:runId");

  registerRetention(worker, {
    id: "workflow::sweep_retention",
    what: "finished workflow runs (with their step results)",
    days: options.retentionDays ?? 0,
    background: options.startup !== false,
    sweep: (cutoff, now) => sweepRuns(state, cutoff, now),
    warn,
  });
  const resumed = (async () => {
    if (options.startup === false) return 0;
    // The service's own files are loaded by config::reload (after the agents they name); a directory
    // given here (an embedding, a test) is loaded at once.
    if (options.directory !== undefined) {
      const files = loadWorkflowFiles(options.directory, warn);
      await loadFileWorkflows(defs, DEFAULT_REALM_ID, files, (file, message) => warn(`${file}: ${message}`));
    }
    const resume = { state, control, graceMs: options.resumeGraceMs ?? 30_000, warn };
    if (leases) watchLeases(worker, control, leases, () => resumeRuns(resume));
    return resumeRuns(resume);
  })();
  resumed.catch((error) => warn(`Resuming workflow runs failed: ${(error as Error).message}`));
  return { resumed };
}

/**
 * Each node's own cron tick (its node id in the tick's data, so every node runs its own): renew the
 * leases of the runs it executes, then take over runs whose lease lapsed.
 */
function watchLeases(
  worker: WorkerClient,
  control: RunControl,
  leases: Leases,
  takeOver: () => Promise<number>,
): void {
  const state = stateClient(worker.trigger.bind(worker));
  worker.registerFunction(
    { id: "workflow::lease_tick", description: "Renew this node's run leases and take over lapsed runs" },
    async () => {
      // A run cancelled on another node stops here at once, not only at its next checkpoint.
      await renewLeases(state, leases, (runId) => control.local.get(runId)?.controller.abort());
      // Shutting down: it would run none of them (and might take back what it just released).
      if (control.drain.active) return { takenOver: 0 };
      return { takenOver: await takeOver() };
    },
  );
  const seconds = tickSeconds(leases);
  worker.registerTrigger({
    type: "cron",
    function_id: "workflow::lease_tick",
    config: {
      expression: seconds === 1 ? "* * * * * *" : `*/${seconds} * * * * *`,
      data: { node: leases.nodeId },
    },
  });
}
