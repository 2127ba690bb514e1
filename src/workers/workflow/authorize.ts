import { call } from "../../engine/call.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { forbidden } from "../../shared/errors.ts";
import type { RunPrincipal, Workflow } from "./schema.ts";

/**
 * Every step's function must be within the agent's capabilities before anything runs (403 names it).
 * `agent::chat` steps talk to an agent rather than act for it: they are the workflow's, not a tool call.
 */
export async function authorize(
  worker: WorkerClient,
  workflow: Workflow,
  agentId: string,
  auth: RunPrincipal,
): Promise<void> {
  const functionIds = [
    ...new Set(workflow.steps.map((step) => step.functionId).filter((id) => id !== "agent::chat")),
  ];
  if (functionIds.length === 0) return;
  const { denied } = await call(
    worker.trigger.bind(worker),
    "agent::authorize",
    { agentId, functionIds },
    { auth },
  );
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

export function audit(worker: WorkerClient, type: string, detail: Record<string, unknown>): void {
  void call(worker.trigger.bind(worker), "security::audit", { type, detail }, { action: { type: "void" } });
}
