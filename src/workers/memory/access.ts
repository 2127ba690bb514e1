import { actingAgentOf } from "../../engine/acting-agent.ts";
import { call } from "../../engine/call.ts";
import { systemCall } from "../../engine/system-call.ts";
import type { InvocationContext, TriggerFn } from "../../engine/types.ts";
import { isPrivileged } from "../../shared/access.ts";
import { type AppError, isFunctionNotFound, notFound } from "../../shared/errors.ts";
import { AGENT_DELETING } from "../../shared/realm-refs.ts";

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

/**
 * False when the agent is gone or being deleted, asked as the system (whoever stored). Asked after a
 * store: agent::delete marks the agent before it forgets its memory, so a store that still sees the
 * agent here was written before the purge, which removes it.
 */
export async function agentRemains(trigger: TriggerFn, agentId: string): Promise<boolean> {
  try {
    const agent = await systemCall(trigger, "agent::get", { id: agentId });
    return agent.status !== AGENT_DELETING;
  } catch (error) {
    // Without an agents worker (memory tested alone) there are no agents to go.
    if (isFunctionNotFound(error)) return true;
    if ((error as AppError).code === "not_found") return false;
    throw error;
  }
}
