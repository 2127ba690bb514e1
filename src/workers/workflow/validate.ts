import { call } from "../../engine/call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { badRequest, isAppError } from "../../shared/errors.ts";
import { type InputSchema, inputSchemaOf, payloadProblem } from "../../shared/schema-check.ts";
import { templateVariables } from "../../shared/templates.ts";
import type { Step } from "./schema.ts";
import { templateProblem } from "./variables.ts";

interface FunctionInfo {
  request_schema?: InputSchema;
}

/**
 * Checked when a workflow is written, so a mistake is a 400 now and not a failed run later: every
 * step's function exists (or the step says it is `optional`: a remote worker's function that connects
 * later), `args` name only fields the function takes, give every field it requires, and use only
 * variables the run will have.
 */
export async function validateSteps(
  trigger: TriggerFn,
  steps: Step[],
  /** Files read at start: a function not registered yet is a warning (its worker may connect later). */
  onMissing?: (message: string) => void,
): Promise<void> {
  const problem = templateProblem(steps);
  if (problem) throw badRequest(problem);
  for (const [index, step] of steps.entries()) {
    const info = await functionInfo(trigger, step.functionId);
    if (!info && !step.optional) {
      const message = `steps.${index}: step "${step.name}" calls ${step.functionId}, which does not exist (GET /api/functions lists what you may call; mark the step "optional": true if a remote worker will provide it)`;
      if (!onMissing) throw badRequest(message);
      onMissing(message);
    }
    if (step.agentId !== undefined) await checkAgent(trigger, index, step, step.agentId);
    if (step.args !== undefined && info?.request_schema) checkArgs(index, step, info.request_schema);
  }
}

/** The ids of the steps' functions that are not registered now (e.g. a remote worker not connected). */
export async function missingFunctions(trigger: TriggerFn, steps: Step[]): Promise<string[]> {
  const ids = [...new Set(steps.map((step) => step.functionId))];
  const missing: string[] = [];
  for (const id of ids) if (!(await functionInfo(trigger, id))) missing.push(id);
  return missing;
}

/** A step's own agent must be one the writer can reach (asked as the writer: another realm's is refused). */
async function checkAgent(trigger: TriggerFn, index: number, step: Step, agentId: string): Promise<void> {
  try {
    await call(trigger, "agent::get", { id: agentId });
  } catch (error) {
    if (!isAppError(error) || error.status >= 500) throw error;
    throw badRequest(`steps.${index}.agentId: step "${step.name}" names agent ${agentId}: ${error.message}`);
  }
}

async function functionInfo(trigger: TriggerFn, functionId: string): Promise<FunctionInfo | null> {
  try {
    const info = await call(trigger, "engine::functions::info", { function_id: functionId });
    return { request_schema: info.request_schema && inputSchemaOf(info.request_schema) };
  } catch (error) {
    if (isAppError(error) && error.status === 404) return null;
    throw error;
  }
}

const isTemplate = (value: unknown) => typeof value === "string" && templateVariables(value).length > 0;

function checkArgs(index: number, step: Step, schema: InputSchema): void {
  // The run fills in agentId (the step's or the run's agent), as it does for an agent's own tool call.
  const takesAgent = (schema as { properties?: Record<string, unknown> }).properties?.agentId !== undefined;
  const args =
    takesAgent && step.args?.agentId === undefined ? { ...step.args, agentId: "{{agentId}}" } : step.args;
  const problem = payloadProblem(step.functionId, args ?? {}, schema, isTemplate);
  if (problem) throw badRequest(`steps.${index}.args: step "${step.name}": ${problem}`);
}
