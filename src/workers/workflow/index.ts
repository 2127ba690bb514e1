import { publishEvent } from "../../engine/events.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { Principal } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { isPrivileged } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { describeZodError, forbidden, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { isInternalFunction } from "../../shared/internal-functions.ts";
import { type ExecutorDeps, executeRun } from "./executor.ts";
import { loadWorkflowFiles } from "./files.ts";
import { resumeRuns } from "./resume.ts";
import {
  listInput,
  type Run,
  runIdInput,
  runInput,
  runsInput,
  type Workflow,
  type WorkflowInput,
  workflowInput,
} from "./schema.ts";
import { listRuns, listWorkflows, loadRun, saveRun, startRun, WORKFLOWS_SCOPE } from "./store.ts";

export interface WorkflowOptions {
  /** Directory whose `workflows/*.yaml` are loaded at start (the working directory by default). */
  directory?: string;
  /** Base of the exponential retry backoff, in ms (default 200: 200, 400, 800, ...). */
  retryBaseMs?: number;
  /** Cluster mode: runs are leased to nodes, so a restart only resumes runs whose node went quiet. */
  cluster?: boolean;
  /** How long a resumed run waits for its steps' functions (remote workers reconnecting). */
  resumeGraceMs?: number;
  /**
   * False in a process that does no background work (a CLI command): no start-up work at all, neither
   * `workflows/*.yaml` of the working directory loaded nor runs left running resumed, since those belong
   * to the process that serves the data. Default true.
   */
  startup?: boolean;
  warn?: (message: string) => void;
}

/** Durable workflows: definitions, runs checkpointed after every step, resumed after a crash. */
export function registerWorkflow(
  worker: WorkerClient,
  options: WorkflowOptions = {},
): { resumed: Promise<number> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const fields = new Map<string, string[] | undefined>();
  const deps: ExecutorDeps = {
    trigger,
    checkpoint: (run) => saveRun(state, run),
    publish: (event, run, step) =>
      publishEvent(trigger, "workflow.run", {
        event,
        runId: run.runId,
        workflowId: run.workflowId,
        status: run.status,
        ...(step ? { step } : {}),
      }),
    retryDelayMs: (attempt) => Math.min((options.retryBaseMs ?? 200) * 2 ** attempt, 30_000),
    inputFields: async (functionId) => {
      if (fields.has(functionId)) return fields.get(functionId);
      const info = (await trigger({
        function_id: "engine::functions::info",
        payload: { function_id: functionId },
      }).catch(() => null)) as {
        request_schema?: { properties?: Record<string, unknown>; additionalProperties?: unknown };
      } | null;
      const schema = info?.request_schema;
      // Only functions that refuse unknown fields get a filtered payload; the rest see every variable.
      const declared =
        schema?.properties && schema.additionalProperties === false
          ? Object.keys(schema.properties)
          : undefined;
      fields.set(functionId, declared);
      return declared;
    },
  };

  const save = async (input: WorkflowInput): Promise<Workflow> => {
    const workflow: Workflow = { ...input, id: input.id ?? newId("wf"), createdAt: nowIso() };
    await state.set(WORKFLOWS_SCOPE, workflow.id, workflow);
    return workflow;
  };

  worker.registerFunction(
    {
      id: "workflow::create",
      description: "Store a workflow definition; returns {id}",
      input: workflowInput,
    },
    async (input) => ({ id: (await save(input)).id }),
  );

  worker.registerFunction(
    { id: "workflow::list", description: "Workflow definitions: {workflows}", input: listInput },
    async () => ({
      workflows: await listWorkflows(state),
    }),
  );

  worker.registerFunction(
    { id: "workflow::run", description: "Run a workflow: {runId, status, results, vars}", input: runInput },
    async ({ workflowId, input, agentId }, ctx) => {
      const workflow = await state.get<Workflow>(WORKFLOWS_SCOPE, workflowId);
      if (!workflow) throw notFound(`Workflow ${workflowId} not found`);
      refuseInternalSteps(workflow, ctx.auth);
      if (agentId) await authorize(worker, workflow, agentId, ctx.auth);
      const run: Run = {
        runId: newId("run"),
        workflowId,
        status: "running",
        input: input ?? null,
        ...(agentId ? { agentId } : {}),
        results: [],
        vars: { input: input ?? null },
        position: 0,
        startedAt: nowIso(),
      };
      await startRun(state, run);
      deps.publish("started", run);
      if (agentId) audit(worker, "workflow_run", { runId: run.runId, workflowId, agentId });
      const done = await executeRun(deps, workflow, run);
      return { runId: done.runId, status: done.status, results: done.results, vars: done.vars };
    },
  );

  worker.registerFunction(
    {
      id: "workflow::runs",
      description: "A workflow's runs, newest first: {runs, total, limit, offset}",
      input: runsInput,
    },
    async ({ id, limit, offset }) => ({ ...(await listRuns(state, id, limit, offset)), limit, offset }),
  );

  worker.registerFunction(
    { id: "workflow::get_run", description: "One run with its step history", input: runIdInput },
    async ({ runId }) => {
      const run = await loadRun(state, runId);
      if (!run) throw notFound(`Run ${runId} not found`);
      return run;
    },
  );

  worker.registerRoute("workflow::list", "GET", "/api/workflows");
  worker.registerRoute("workflow::create", "POST", "/api/workflows", { status: 201 });
  worker.registerRoute("workflow::run", "POST", "/api/workflows/run");
  worker.registerRoute("workflow::runs", "GET", "/api/workflows/:id/runs");
  worker.registerRoute("workflow::get_run", "GET", "/api/workflows/runs/:runId");

  const warn = options.warn ?? (() => undefined);
  const resumed = (async () => {
    if (options.startup === false) return 0;
    for (const file of loadWorkflowFiles(options.directory ?? process.cwd(), warn)) {
      const parsed = workflowInput.safeParse(file.definition);
      if (parsed.success) await save(parsed.data);
      else warn(`Skipping ${file.path}: ${describeZodError(parsed.error)}`);
    }
    return resumeRuns({
      state,
      deps,
      cluster: options.cluster ?? false,
      graceMs: options.resumeGraceMs ?? 30_000,
      warn,
    });
  })();
  resumed.catch((error) => warn(`Resuming workflow runs failed: ${(error as Error).message}`));
  return { resumed };
}

/**
 * Steps run under the caller's principal. Internal functions check no realm, so only admin keys and
 * the service itself may run workflows whose steps name one; anyone else gets 403 naming the step.
 */
function refuseInternalSteps(workflow: Workflow, auth: Principal): void {
  if (isPrivileged(auth)) return;
  const step = workflow.steps.find((candidate) => isInternalFunction(candidate.functionId));
  if (step) {
    throw forbidden(
      `Step "${step.name}" calls ${step.functionId}, an internal function only admin keys may run in a workflow`,
    );
  }
}

/** Every step's function must be within the agent's capabilities before anything runs (403 names it). */
async function authorize(
  worker: WorkerClient,
  workflow: Workflow,
  agentId: string,
  auth: Parameters<WorkerClient["trigger"]>[0]["auth"],
): Promise<void> {
  const functionIds = [...new Set(workflow.steps.map((step) => step.functionId))];
  const { denied } = (await worker.trigger({
    function_id: "agent::authorize",
    payload: { agentId, functionIds },
    auth,
  })) as { denied: string[] };
  if (denied.length === 0) return;
  const step = workflow.steps.find((candidate) => denied.includes(candidate.functionId));
  audit(worker, "capability_denied", {
    agentId,
    workflowId: workflow.id,
    step: step?.name,
    functionId: step?.functionId,
  });
  throw forbidden(
    `Agent ${agentId} may not call ${step?.functionId} (step "${step?.name}" of workflow ${workflow.id})`,
  );
}

function audit(worker: WorkerClient, type: string, detail: Record<string, unknown>): void {
  void worker.trigger({
    function_id: "security::audit",
    payload: { type, detail },
    action: { type: "void" },
  });
}
