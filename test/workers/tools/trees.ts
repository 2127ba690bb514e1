import { call } from "../../helpers/control-plane.ts";
import type { ToolsEnv } from "./setup.ts";

/** A root agent and a sub-agent it spawned, with the `as` that runs a tool call as the sub-agent. */
export async function rootAndChild(env: ToolsEnv, name: string) {
  const root = await env.agent({ toolProfile: "full" });
  const { agentId } = await env.tool<{ agentId: string }>("tool::agent_spawn", { name, toolProfile: "full" });
  return { root, asChild: { agentId, realmId: root.realmId } };
}

/** What the realm's ledger says each agent spent. */
export const spentByAgent = async (env: ToolsEnv, realmId: string) =>
  (await call(env.server, "GET", `/api/ledger/summary/${realmId}?groupBy=agent`)).body.breakdown as Record<
    string,
    number
  >;
