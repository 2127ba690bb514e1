import { actingAgentOf } from "../../engine/acting-agent.ts";
import { call } from "../../engine/call.ts";
import type { InvocationContext, TriggerFn } from "../../engine/types.ts";
import { isPrivileged } from "../../shared/access.ts";
import { isFunctionNotFound, notFound } from "../../shared/errors.ts";

/**
 * Who may use an agent's memory: the service and admin keys; an agent, its own memory only; a realm key,
 * the memory of its realm's agents (`agent::get` as the caller answers 404 for another realm's, as if the
 * agent were not there). The memory functions are reachable beyond the agents worker's routes (a
 * workflow step names its function and `args.agentId`), so each checks for itself.
 */
export async function assertMemoryAccess(
  trigger: TriggerFn,
  ctx: InvocationContext,
  agentId: string,
): Promise<void> {
  if (isPrivileged(ctx.auth)) return;
  const acting = actingAgentOf(ctx.auth);
  if (acting !== undefined) {
    if (acting !== agentId) throw notFound(`Agent ${agentId} not found`);
    return;
  }
  try {
    await call(trigger, "agent::get", { id: agentId });
  } catch (error) {
    // A memory worker without an agents worker (tested alone) has no agents to check against.
    if (!isFunctionNotFound(error)) throw error;
  }
}
