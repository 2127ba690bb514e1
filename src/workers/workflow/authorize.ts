import { call } from "../../engine/call.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { forbidden } from "../../shared/errors.ts";
import { runsAsAgent } from "./executor.ts";
import type { RunPrincipal, Step, Workflow } from "./schema.ts";

/**
 * Every step's function must be within the capabilities of each agent it acts for before anything runs
 * (403 names it): the run's agent (every step) and a tool step's own agent, which it runs as.
 * `agent::chat` steps talk to an agent rather than act for it: they are the workflow's, not a tool call.
 */
export async function authorize(
  worker: WorkerClient,
  workflow: Workflow,
  agentId: string | undefined,
  auth: RunPrincipal,
): Promise<void> {
  for (const [agent, steps] of stepsByAgent(workflow.steps, agentId)) {
    await authorizeAgent(worker, workflow, agent, steps, auth);
  }
}

/** The steps each agent answers for: all of them for the run's agent, a tool step for its own agent. */
function stepsByAgent(steps: Step[], runAgent: string | undefined): Map<string, Step[]> {
  const byAgent = new Map<string, Step[]>();
  const add = (agentId: string, step: Step) => byAgent.set(agentId, [...(byAgent.get(agentId) ?? []), step]);
  for (const step of steps) {
    if (step.functionId === "agent::chat") continue;
    if (runAgent !== undefined) add(runAgent, step);
    if (step.agentId !== undefined && step.agentId !== runAgent && runsAsAgent(step)) add(step.agentId, step);
  }
  return byAgent;
}

async function authorizeAgent(
  worker: WorkerClient,
  workflow: Workflow,
  agentId: string,
  steps: Step[],
  auth: RunPrincipal,
): Promise<void> {
  const functionIds = [...new Set(steps.map((step) => step.functionId))];
  const { denied } = await call(
    worker.trigger.bind(worker),
    "agent::authorize",
    { agentId, functionIds },
    { auth },
  );
  if (denied.length === 0) return;
  const step = steps.find((candidate) => denied.includes(candidate.functionId));
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

export function audit(worker: WorkerClient, type: string, detail: Record<string, unknown>): void {
  void call(worker.trigger.bind(worker), "security::audit", { type, detail }, { action: { type: "void" } });
}
