import type { StateClient } from "../../engine/state/client.ts";
import type { TriggerFn } from "../../engine/types.ts";
import type { DeletedAgents } from "./deleted-agents.ts";

/** What an agent's turn needs of the service (the turn's parts — tools, memory — take it too). */
export interface ChatDeps {
  trigger: TriggerFn;
  state: StateClient;
  env: NodeJS.ProcessEnv;
  /** Model calls per turn, tool round trips included. */
  maxSteps: number;
  /**
   * Agents this process deleted (embedded mode): a turn ending asks this instead of reading its agent
   * again. Unset (cluster mode: another node may delete it), the turn reads the agent.
   */
  deleted?: DeletedAgents;
}
