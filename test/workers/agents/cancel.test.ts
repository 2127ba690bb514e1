import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAgent, newRealm } from "../../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { sleep } from "../../helpers/iii.ts";
import { json, startTestServer, type TestServer } from "../../helpers/server.ts";

/**
 * A turn whose caller gave up (the engine's timeout of the call aborted ctx.signal) stops: its model
 * call is aborted, no further model or tool call starts, and it stores nothing in the session.
 */
let fake: FakeOpenAI;
let server: TestServer;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  server = await startTestServer({
    env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl },
    // agent::message is called with the request timeout as its engine timeout.
    requestTimeoutMs: 1000,
  });
});
afterEach(async () => {
  await server.close();
  await fake.close();
});

async function messageCount(agentId: string, sessionId: string): Promise<number> {
  const { sessions } = await json(await server.request(`/api/agents/${agentId}/sessions`));
  return sessions.find((s: { id: string }) => s.id === sessionId)?.messageCount ?? 0;
}

describe("an agent turn aborted by its caller's timeout", () => {
  it("POST /api/agents/:id/message past the request timeout: 504, and the late reply is not stored", async () => {
    const agentId = await createAgent(server, await newRealm(server));
    fake.reply({ content: "too late", delayMs: 2000 });
    const response = await server.request(`/api/agents/${agentId}/message`, {
      method: "POST",
      json: { message: "hello", sessionId: "s-late" },
    });
    expect(response.status).toBe(504);
    // Past the moment the model would have answered: the turn did not go on to store it.
    await sleep(2000);
    expect(await messageCount(agentId, "s-late")).toBe(0);
    // The agent still works, and the session continues without the abandoned exchange.
    fake.reply({ content: "on time" });
    const next = await server.request(`/api/agents/${agentId}/message`, {
      method: "POST",
      json: { message: "again", sessionId: "s-late" },
    });
    expect((await json(next)).content).toBe("on time");
    expect(await messageCount(agentId, "s-late")).toBe(2);
  }, 15_000);

  it("agent::chat called with timeout_ms stops its tool loop: no model call follows the slow tool", async () => {
    const engine = server.service.engine;
    let toolCalls = 0;
    engine.worker("test").registerFunction({ id: "test::slow", description: "A slow lookup" }, async () => {
      toolCalls++;
      await sleep(1500);
      return { found: true };
    });
    const agentId = await createAgent(server, await newRealm(server), { tools: ["test::slow"] });
    fake.reply({ toolCalls: [{ name: "test__slow", arguments: {} }] }, { content: "never asked" });
    await expect(
      engine.trigger({
        function_id: "agent::chat",
        payload: { agentId, message: "look it up", sessionId: "s-tools" },
        timeout_ms: 500,
      }),
    ).rejects.toMatchObject({ code: "timeout" });
    // The tool finishes (it runs under its own timeout), but the turn does not ask the model again.
    await sleep(2000);
    expect(toolCalls).toBe(1);
    expect(fake.requests).toHaveLength(1);
    expect(await messageCount(agentId, "s-tools")).toBe(0);
  }, 15_000);
});
