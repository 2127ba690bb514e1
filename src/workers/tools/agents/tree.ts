import { type AppError, conflict } from "../../../shared/errors.ts";
import { agentOf } from "../context.ts";
import type { ToolAgent, ToolContext } from "../tool.ts";

type TreeMember = Pick<ToolAgent, "id" | "realmId" | "metadata">;

/** The root of the agent's tree of sub-agents (tool::agent_spawn records it), else the agent itself. */
export function treeRootOf(agent: TreeMember): string {
  const root = agent.metadata?.spawnRoot;
  return typeof root === "string" && root ? root : agent.id;
}

/** The agent still exists and is not being deleted (agentOf reads `deleting` as missing). */
export async function agentLive(ctx: ToolContext, agentId: string): Promise<boolean> {
  try {
    await agentOf(ctx.trigger, agentId);
    return true;
  } catch (error) {
    if ((error as AppError).code === "not_found") return false;
    throw error;
  }
}

/** 409 naming the root: its tree acts on other agents no more once it is deleted or being deleted. */
export const rootGone = (root: string, doing: string) =>
  conflict(
    `Agent ${root}, the root of your tree of sub-agents, is deleted or being deleted: its sub-agents may not ${doing}`,
  );

/**
 * Refuses (409) a sub-agent whose tree's root is gone: deleting the root leaves its sub-agents, and
 * what they created after it would belong to no tree (no budget, no spawn quota: the root's counter
 * goes with it). The root itself was read by ctx.agent already.
 */
export async function assertRootLive(ctx: ToolContext, agent: TreeMember, doing: string): Promise<void> {
  const root = treeRootOf(agent);
  if (root !== agent.id && !(await agentLive(ctx, root))) throw rootGone(root, doing);
}
