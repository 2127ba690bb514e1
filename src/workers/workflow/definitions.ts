import { basename, extname } from "node:path";
import { call } from "../../engine/call.ts";
import { casUpdate, isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { Principal, TriggerFn } from "../../engine/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { conflict, describeZodError, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { recheckRealm, requireRealm } from "../../shared/realm-refs.ts";
import { assertStepsAllowed, authorOf } from "./access.ts";
import type { WorkflowFile } from "./files.ts";
import type { FunctionInfo } from "./function-info.ts";
import {
  type UpdateInput,
  type Workflow,
  type WorkflowAuthor,
  type WorkflowInput,
  workflowInput,
} from "./schema.ts";
import { deletedScope, normalizeWorkflow, purgeWorkflows, requireWorkflow, workflowsScope } from "./store.ts";
import { validateSteps } from "./validate.ts";

export interface DefinitionDeps {
  state: StateClient;
  trigger: TriggerFn;
  functionInfo: FunctionInfo;
}

/** Create-only: an existing id in the realm is a 409, never a silent replacement. */
export async function createWorkflow(
  deps: DefinitionDeps,
  realmId: string,
  input: WorkflowInput,
  auth: Principal,
): Promise<Workflow> {
  await assertStepsAllowed(input.steps, auth, "write", deps.functionInfo);
  await requireRealm(deps.trigger, realmId, { write: true });
  await validateSteps(deps.trigger, input.steps);
  const { id, realmId: _named, ...fields } = input;
  const now = nowIso();
  const workflow: Workflow = {
    ...fields,
    id: id ?? newId("wf"),
    realmId,
    version: 1,
    author: authorOf(auth),
    createdAt: now,
    updatedAt: now,
  };
  try {
    await deps.state.set(workflowsScope(realmId), workflow.id, workflow, 0);
  } catch (error) {
    if (!isConflict(error)) throw error;
    throw conflict(
      `Workflow ${workflow.id} already exists in realm ${realmId}: change it with PATCH /api/workflows/${workflow.id}`,
    );
  }
  // A realm delete that began meanwhile has purged, or will purge, what it saw: see to the rest.
  await recheckRealm(deps.trigger, realmId, () => purgeWorkflows(deps.state, realmId));
  return workflow;
}

/**
 * An explicit, versioned change: the fields given replace the stored ones, the version goes up by one,
 * and whoever changes it becomes its author (runs never get more rights than the last writer had). The
 * resulting steps are checked against the writer, so a realm key cannot adopt an admin's internal steps.
 */
export async function updateWorkflow(
  deps: DefinitionDeps,
  realmId: string,
  input: UpdateInput,
  auth: Principal,
): Promise<Workflow> {
  if (input.steps) await assertStepsAllowed(input.steps, auth, "write", deps.functionInfo);
  await requireRealm(deps.trigger, realmId, { write: true });
  if (input.steps) await validateSteps(deps.trigger, input.steps);
  const { id, realmId: _named, expectedVersion, ...fields } = input;
  let updated: Workflow | undefined;
  await casUpdate<Workflow>(deps.state, workflowsScope(realmId), id, async ({ value }) => {
    if (!value) throw notFound(`Workflow ${id} not found in realm ${realmId}`);
    const current = normalizeWorkflow(value);
    if (expectedVersion !== undefined && expectedVersion !== current.version) {
      throw conflict(`Workflow ${id} is at version ${current.version}, not ${expectedVersion}`);
    }
    const next: Workflow = {
      ...current,
      ...fields,
      version: current.version + 1,
      author: authorOf(auth),
      updatedAt: nowIso(),
    };
    await assertStepsAllowed(next.steps, auth, "write", deps.functionInfo);
    updated = next;
    return next;
  });
  return updated as Workflow;
}

export function getWorkflow(deps: DefinitionDeps, realmId: string, id: string): Promise<Workflow> {
  return requireWorkflow(deps.state, realmId, id);
}

/**
 * Removes the definition; its runs stay readable (by run id and in the id's run list) until the realm
 * goes, which a tombstone remembers. Runs still in flight finish on their own.
 */
export async function deleteWorkflow(deps: DefinitionDeps, realmId: string, id: string): Promise<Workflow> {
  const workflow = await getWorkflow(deps, realmId, id);
  await requireRealm(deps.trigger, realmId, { write: true });
  await deps.state.set(deletedScope(realmId), id, { deletedAt: nowIso(), version: workflow.version });
  await deps.state.delete(workflowsScope(realmId), id);
  return workflow;
}

/**
 * `workflows/*.yaml` of the service's home belong to the default realm and are written by the service.
 * A file without `id` takes its file name, so a restart updates it instead of adding a copy; an
 * unchanged file leaves the stored workflow (and its version) alone.
 */
export async function loadFileWorkflows(
  deps: DefinitionDeps,
  realmId: string,
  files: WorkflowFile[],
  warn: (file: string, message: string) => void,
): Promise<{ loaded: string[]; unchanged: string[] }> {
  const report = { loaded: [] as string[], unchanged: [] as string[] };
  for (const file of files) {
    let definition: unknown;
    try {
      definition = await withAgentIds(deps.trigger, realmId, withFileId(file));
    } catch (error) {
      warn(file.path, `Skipping: ${(error as Error).message}`);
      continue;
    }
    const parsed = workflowInput.safeParse(definition);
    if (!parsed.success) {
      warn(file.path, `Skipping: ${describeZodError(parsed.error)}`);
      continue;
    }
    const notYet = (message: string) =>
      warn(file.path, `${message}; it runs once the function is registered`);
    const invalid = await validateSteps(deps.trigger, parsed.data.steps, notYet).then(
      () => null,
      (error: Error) => error.message,
    );
    if (invalid) {
      warn(file.path, `Skipping: ${invalid}`);
      continue;
    }
    const { id = "", realmId: _named, ...fields } = parsed.data;
    let changed = false;
    await casUpdate<Workflow>(deps.state, workflowsScope(realmId), id, ({ value }) => {
      const now = nowIso();
      changed = true;
      if (!value) {
        return { ...fields, id, realmId, version: 1, author: SERVICE, createdAt: now, updatedAt: now };
      }
      const current = normalizeWorkflow(value);
      const same =
        JSON.stringify({ ...fields, author: SERVICE }) ===
        JSON.stringify({
          name: current.name,
          ...(current.description === undefined ? {} : { description: current.description }),
          steps: current.steps,
          author: current.author,
        });
      if (same) {
        changed = false;
        return undefined;
      }
      return { ...current, ...fields, version: current.version + 1, author: SERVICE, updatedAt: now };
    });
    (changed ? report.loaded : report.unchanged).push(id);
  }
  return report;
}

/**
 * A file's step may name its agent by name (`agent: researcher`) rather than by id, so the files stay
 * valid on any installation: the name becomes the id of the realm's agent of that name, whether
 * `agents/` declared it or it was made over the API.
 */
async function withAgentIds(trigger: TriggerFn, realmId: string, definition: unknown): Promise<unknown> {
  if (typeof definition !== "object" || definition === null) return definition;
  const steps = (definition as { steps?: unknown }).steps;
  if (!Array.isArray(steps)) return definition;
  const resolved = [];
  for (const [index, step] of steps.entries()) {
    if (typeof step !== "object" || step === null || !("agent" in step)) {
      resolved.push(step);
      continue;
    }
    const { agent, ...rest } = step as { agent: unknown };
    if (typeof agent !== "string") throw new Error(`steps.${index}.agent: must be an agent's name`);
    const found = await call(
      trigger,
      "config::agent_id",
      { name: agent, realmId },
      { auth: { kind: "system" } },
    ).catch(() => null);
    if (!found?.agentId)
      throw new Error(
        `steps.${index}.agent: no agent ${agent} is declared in agents/ (realm ${realmId}) or made over the API in that realm`,
      );
    resolved.push({ ...rest, agentId: found.agentId });
  }
  return { ...definition, steps: resolved };
}

const SERVICE: WorkflowAuthor = { kind: "system" };

/** A file's id: its `id`, else its file name. */
export function withFileId(file: WorkflowFile): unknown {
  const definition = file.definition;
  if (typeof definition !== "object" || definition === null || Array.isArray(definition)) return definition;
  if ("id" in definition) return definition;
  return { id: basename(file.path, extname(file.path)), ...definition };
}
