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
 * The agent's realm, or null when the agent is gone or being deleted, asked as the system (whoever
 * stored); undefined without an agents worker (memory tested alone: there are no agents to go). Asked
 * after a store: agent::delete marks the agent before it forgets its memory, so a store that still sees
 * the agent here was written before the purge, which removes it. A realm delete does not mark its
 * agents: the caller checks the realm too (recheckRealm).
 */
export async function remainingAgentRealm(
  trigger: TriggerFn,
  agentId: string,
): Promise<string | null | undefined> {
  try {
    const agent = await systemCall(trigger, "agent::get", { id: agentId });
    return agent.status === AGENT_DELETING ? null : agent.realmId;
  } catch (error) {
    if (isFunctionNotFound(error)) return undefined;
    if ((error as AppError).code === "not_found") return null;
    throw error;
  }
}
