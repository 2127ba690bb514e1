import { describe, expect, it } from "vitest";
import { call, createAgent, createRealm, realmKey } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import type { TestServer } from "../../helpers/server.ts";

const env = serverWithFakeModel();

/** What the store still holds of an agent: its record, sessions, one session's messages, memories. */
async function leftOf(server: TestServer, agentId: string, sessionId: string) {
  const trigger = server.service.engine.trigger.bind(server.service.engine);
  const list = async (scope: string) =>
    ((await trigger({ function_id: "state::list", payload: { scope } })) as { items: unknown[] }).items;
  return {
    agent: await trigger({ function_id: "state::get", payload: { scope: "agents", key: agentId } }),
    sessions: await list(`agent_sessions:${agentId}`),
    messages: await list(`agent_messages:${agentId}:${sessionId}`),
    memories: (
      (await trigger({ function_id: "memory::list", payload: { agentId } })) as { memories: unknown[] }
    ).memories,
  };
}

const nothing = { agent: null, sessions: [], messages: [], memories: [] };

describe("an agent deleted while its turn is under way", () => {
  it("keeps none of the turn: no session, message or memory of the deleted agent is left (404)", async () => {
    const realm = await createRealm(env.server);
    const key = await realmKey(env.server, realm.id);
    const agentId = await createAgent(env.server, realm.id, { name: "a" });
    env.fake.reply({ content: "late reply", delayMs: 800 });
    const turn = call(
      env.server,
      "POST",
      `/api/agents/${agentId}/message`,
      { message: "my secret", sessionId: "mine" },
      key,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await call(env.server, "DELETE", `/api/agents/${agentId}`, undefined, key)).status).toBe(204);
    expect(await turn).toEqual({ status: 404, body: { error: `Agent ${agentId} not found` } });
    expect(await leftOf(env.server, agentId, "mine")).toEqual(nothing);
  });

  it("keeps none of it either when the agent's realm is deleted meanwhile", async () => {
    const realm = await createRealm(env.server);
    const agentId = await createAgent(env.server, realm.id, { name: "a" });
    env.fake.reply({ content: "late reply", delayMs: 800 });
    const turn = call(env.server, "POST", `/api/agents/${agentId}/message`, {
      message: "my secret",
      sessionId: "mine",
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await call(env.server, "DELETE", `/api/realms/${realm.id}`)).status).toBe(200);
    expect((await turn).status).toBe(404);
    expect(await leftOf(env.server, agentId, "mine")).toEqual(nothing);
  });

  it("still keeps every turn of an agent that is not deleted", async () => {
    const realm = await createRealm(env.server);
    const agentId = await createAgent(env.server, realm.id, { name: "a" });
    const answered = await call(env.server, "POST", `/api/agents/${agentId}/message`, {
      message: "hello",
      sessionId: "mine",
    });
    expect(answered.status).toBe(200);
    const left = await leftOf(env.server, agentId, "mine");
    expect(left.sessions).toHaveLength(1);
    expect(left.messages).toHaveLength(2);
    expect(left.memories).toHaveLength(2);
  });
});
