import type { z } from "zod";
import type { OutputOf } from "../../engine/call.ts";
import type { InvocationContext, TriggerFn } from "../../engine/types.ts";
import type { NetworkPolicy } from "../../shared/net/guarded-request.ts";
import type { Egress, Sandbox } from "../../shared/process/sandbox/index.ts";

/** An agent as the agents worker answers it (agent::get). */
export type ToolAgent = OutputOf<"agent::get">;

/** What every tool's `run` gets besides its input: the call, the service's parts, and the sandbox. */
export interface ToolContext {
  call: InvocationContext;
  trigger: TriggerFn;
  env: NodeJS.ProcessEnv;
  dataDir: string;
  policy: NetworkPolicy;
  /** The agent, after checking the caller may act as it (another realm's agent is refused). */
  agent(agentId: string): Promise<ToolAgent>;
  /** The agent's workspace directory (created on first use), after the same check. */
  workspace(agentId: string): Promise<string>;
  /** Where every program a tool starts runs. */
  sandbox: Sandbox;
  /** The network the agent's programs may reach (its `egress` grant), or null for none. */
  egressOf(agentId: string): Promise<Egress | null>;
}

/**
 * One tool: an id, a description a model can follow, a zod input and a plain `run`. `risky` says whether
 * a call changes the outside world (a write, a command, a non-GET request): those wait for approval when
 * the agent marks the tool `approval: "required"`.
 */
export interface Tool<Schema extends z.ZodType = z.ZodType, Output extends z.ZodType = z.ZodType> {
  id: `tool::${string}`;
  description: string;
  input: Schema;
  /** What a call answers, where other workers read it (the engine's typed calls are generated from it). */
  output?: Output;
  risky?: boolean | ((input: z.output<Schema>) => boolean);
  /**
   * "agent": the tool acts for the calling agent (its workspace, its data). Its input's `agentId`
   * (agentIdField) is then the agent's own id whenever an agent calls, filled in by the engine from the
   * principal and hidden from the model; other callers (an admin key, a workflow) name the agent.
   */
  actsFor?: "agent";
  run(input: z.output<Schema>, ctx: ToolContext): Promise<z.input<Output>> | z.input<Output>;
}

/** Keeps the input type of `run` tied to the schema (a plain object literal would widen it). */
export function defineTool<Schema extends z.ZodType, Output extends z.ZodType = z.ZodUnknown>(
  tool: Tool<Schema, Output>,
): Tool {
  return tool as unknown as Tool;
}
