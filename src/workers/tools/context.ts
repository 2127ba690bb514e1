import { call } from "../../engine/call.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { InvocationContext, TriggerFn } from "../../engine/types.ts";
import { notFound } from "../../shared/errors.ts";
import { type NetworkPolicy, policyForCaller } from "../../shared/net/guarded-request.ts";
import { removeTree } from "../../shared/process/remove-tree.ts";
import type { Egress, Sandbox } from "../../shared/process/sandbox/index.ts";
import { ensureDir, snapshotsDir, workspaceDir } from "./sandbox.ts";
import type { ToolAgent, ToolContext } from "./tool.ts";

/** Which agents of a realm have tool data (a workspace, todos, jobs…), so a realm delete finds them all. */
export const toolAgentsScope = (realmId: string) => `tool_agents:${realmId}`;

export interface ToolsDeps {
  trigger: TriggerFn;
  state: StateClient;
  env: NodeJS.ProcessEnv;
  dataDir: string;
  policy: NetworkPolicy;
  sandbox: Sandbox;
}

/** The agent as the caller sees it: another realm's agent is refused by the agents worker itself. */
export async function agentOf(trigger: TriggerFn, agentId: string): Promise<ToolAgent> {
  const agent = await call(trigger, "agent::get", { id: agentId });
  if (agent.status === "deleting") throw notFound(`Agent ${agentId} not found`);
  return agent;
}

/** The agent's grant as the sandbox takes it: one proxy per agent, its allowlist or any public host. */
function egressGrant(agent: ToolAgent): Egress | null {
  if (!agent.egress) return null;
  return { key: `${agent.realmId}/${agent.id}`, allowDomains: agent.egress.allowDomains ?? null };
}

/** Agents this process has recorded in toolAgentsScope already. */
const recorded = new Set<string>();

export function toolContext(deps: ToolsDeps, call: InvocationContext): ToolContext {
  const agent = async (agentId: string) => {
    const found = await agentOf(deps.trigger, agentId);
    const key = `${found.realmId}\u0001${agentId}`;
    if (!recorded.has(key)) {
      if (!(await deps.state.get(toolAgentsScope(found.realmId), agentId))) {
        await deps.state.set(toolAgentsScope(found.realmId), agentId, { agentId });
      }
      recorded.add(key);
    }
    return found;
  };
  return {
    call,
    trigger: deps.trigger,
    env: deps.env,
    dataDir: deps.dataDir,
    // A realm's agents look names up within its share of the resolver (browser and network tools).
    policy: policyForCaller(deps.policy, call.auth),
    agent,
    workspace: async (agentId) => {
      await agent(agentId);
      return ensureDir(workspaceDir(deps.dataDir, agentId));
    },
    sandbox: deps.sandbox,
    egressOf: async (agentId) => egressGrant(await agent(agentId)),
  };
}

/**
 * An agent's workspace and snapshots go (agent or realm delete), at any depth its programs nested them;
 * the caller removes its records. Both are tried before a failure is reported.
 */
export async function removeFiles(deps: ToolsDeps, agentId: string): Promise<void> {
  const workspace = workspaceDir(deps.dataDir, agentId);
  const results = await Promise.allSettled([
    deps.sandbox.withoutPrograms(workspace, () => removeTree(workspace, `agent ${agentId}'s workspace`)),
    removeTree(snapshotsDir(deps.dataDir, agentId), `agent ${agentId}'s snapshots`),
  ]);
  for (const result of results) if (result.status === "rejected") throw result.reason;
}

/** Forgets that this process recorded the agent (its records are being purged). */
export function forgetRecorded(realmId: string, agentId: string): void {
  recorded.delete(`${realmId}\u0001${agentId}`);
}
