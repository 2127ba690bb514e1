import type { InvocationContext } from "../../engine/types.ts";
import { AppError } from "../../shared/errors.ts";
import { CHAIN_METADATA, chainHere, inChain } from "../../shared/workflow-chain.ts";
import type { Run } from "./schema.ts";

/**
 * How deep workflows may nest (a step running a workflow whose step runs a workflow…) by default: a
 * workflow running itself, or A running B running A, otherwise started runs without end, each holding
 * its caller's step (or, run async, each starting the next) until the service ran out of memory.
 */
export const DEFAULT_MAX_WORKFLOW_DEPTH = 8;

/** What a step of `run` that calls workflow::run sends along: the run's chain, the run's workflow last. */
export function chainMetadata(run: Run): Record<string, unknown> {
  return { [CHAIN_METADATA]: [...(run.chain ?? []), run.workflowId] };
}

/** Runs a step of `run` (its calls, and everything they call in turn) as part of the run's chain. */
export function inStepOf<T>(run: Run, step: () => T): T {
  return inChain([...(run.chain ?? []), run.workflowId], step);
}

/**
 * The workflows whose steps started this call, outermost first ([] for a direct call): the call's
 * metadata, else the chain of the step this call was made under (the longer, if both).
 */
export function chainOf(ctx: InvocationContext): string[] {
  const chain = ctx.metadata?.[CHAIN_METADATA];
  const sent = Array.isArray(chain) && chain.every((id) => typeof id === "string") ? chain : [];
  const under = chainHere();
  return under.length > sent.length ? under : sent;
}

/** A 422 naming the chain when running `workflowId` under `chain` would nest past `maxDepth`. */
export function assertNestable(chain: string[], workflowId: string, maxDepth: number): void {
  if (chain.length < maxDepth) return;
  throw new AppError(
    "unprocessable",
    `Workflow ${workflowId} was not run: workflows nest at most ${maxDepth} deep (AGENTOS_WORKFLOW_MAX_DEPTH), and this run would be level ${chain.length + 1}: ${[...chain, workflowId].join(" → ")}`,
    { reason: "workflow_too_deep" },
  );
}
