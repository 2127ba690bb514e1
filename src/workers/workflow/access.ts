import type { Principal } from "../../engine/types.ts";
import { isPrivileged } from "../../shared/access.ts";
import { forbidden, unauthorized } from "../../shared/errors.ts";
import { isStepCallable } from "../../shared/internal-functions.ts";
import type { FunctionInfo } from "./function-info.ts";
import type { RunPrincipal, Step, WorkflowAuthor } from "./schema.ts";

/** Who wrote a workflow, recorded with it so that runs never exceed the author's rights. */
export function authorOf(auth: Principal): WorkflowAuthor {
  if (auth.kind === "anonymous") throw unauthorized("Writing a workflow requires an API key");
  return auth;
}

/**
 * The rights a run's steps get: the caller's, and never more than the author had when writing it. A
 * realm-bound caller keeps its own rights (its realm is the workflow's, checked before); an admin or the
 * service running a workflow a realm key wrote is confined to that realm.
 */
export function runPrincipal(caller: Principal, author: WorkflowAuthor, realmId: string): RunPrincipal {
  if (caller.kind === "anonymous") throw unauthorized("Running a workflow requires an API key");
  if (caller.kind === "realm" || author.kind !== "realm") return caller;
  return { kind: "realm", keyId: caller.kind === "admin" ? caller.keyId : author.keyId, realmId };
}

/**
 * Internal functions check no realm, so only admin keys and the service may write, or run, steps that
 * name one: anyone else gets 403 naming the step, when the workflow is written as well as when it runs.
 * Internal by id, or by the function's registration (`metadata.internal`, e.g. a subscription handler
 * that would let a step act on another realm's agent).
 */
export async function assertStepsAllowed(
  steps: Step[],
  auth: Principal,
  doing: "write" | "run",
  info: FunctionInfo,
): Promise<void> {
  if (isPrivileged(auth)) return;
  const byId = steps.find((candidate) => !isStepCallable(candidate.functionId));
  if (byId) throw internalStep(byId, doing);
  for (const step of steps) {
    if (!(await info(step.functionId)).stepCallable) throw internalStep(step, doing);
  }
}

function internalStep(step: Step, doing: "write" | "run") {
  return forbidden(
    doing === "write"
      ? `Step "${step.name}" calls ${step.functionId}, an internal function: only admin keys may write such a step`
      : `Step "${step.name}" calls ${step.functionId}, an internal function only admin keys may run in a workflow`,
  );
}
