import { describe, expect, it } from "vitest";
import { call, createAgent } from "../../../helpers/control-plane.ts";
import { holdCalls, until } from "../../../helpers/races.ts";
import { toolsServer } from "../setup.ts";

const env = toolsServer();

/** A root agent with a sub-agent, and the sub-agent's own sub-agent. */
async function tree() {
  const root = await env.agent({ toolProfile: "full" });
  const { agentId: child } = await env.tool<{ agentId: string }>("tool::agent_spawn", {
    name: "child",
    toolProfile: "full",
  });
  const asChild = { agentId: child, realmId: root.realmId };
  const { agentId: grandchild } = await env.tool<{ agentId: string }>(
    "tool::agent_spawn",
    { name: "grandchild", toolProfile: "full" },
    asChild,
  );
  return { root, asChild, asGrandchild: { agentId: grandchild, realmId: root.realmId } };
}

const deleteAgent = async (agentId: string) =>
  expect((await call(env.server, "DELETE", `/api/agents/${agentId}`)).status).toBe(204);

const agentIds = async (realmId: string) =>
  (
    (await call(env.server, "GET", `/api/agents?realmId=${realmId}&limit=200`)).body.agents as Array<{
      id: string;
    }>
  ).map((agent) => agent.id);

describe("sub-agents whose root is gone", () => {
  it("may not spawn, send or delegate once their root is deleted (409 naming the root)", async () => {
    const { root, asChild, asGrandchild } = await tree();
    const peer = await createAgent(env.server, root.realmId, { name: "peer" });
    await deleteAgent(root.agentId);
    const before = await agentIds(root.realmId);
    for (const as of [asChild, asGrandchild]) {
      const spawned = await env.failure("tool::agent_spawn", { name: "orphan" }, as);
      expect(spawned).toMatchObject({ status: 409, message: expect.stringContaining(root.agentId) });
      const sent = await env.failure("tool::agent_send", { to: peer, message: "hi" }, as);
      expect(sent.status).toBe(409);
      const delegated = await env.failure("tool::agent_delegate", { to: peer, task: "work" }, as);
      expect(delegated.status).toBe(409);
    }
    expect((await agentIds(root.realmId)).sort()).toEqual(before.sort());
  });

  it("takes back a sub-agent created while its root was being deleted", async () => {
    const { root, asChild } = await tree();
    const before = await agentIds(root.realmId);
    // The child's spawn found its root; its create is answered only once the root is deleted.
    const hold = holdCalls(env.server, "agent::create", (input) => input.name === "late", { after: true });
    const spawning = env.failure("tool::agent_spawn", { name: "late" }, asChild);
    await until(() => hold.held() === 1);
    await deleteAgent(root.agentId);
    hold.release();
    expect(await spawning).toMatchObject({ status: 409, message: expect.stringContaining(root.agentId) });
    const after = await agentIds(root.realmId);
    expect(after.sort()).toEqual(before.filter((id) => id !== root.agentId).sort());
  });
});
