import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent as createAgentIn } from "../../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { json, startTestServer, type TestServer } from "../../helpers/server.ts";

let fake: FakeOpenAI;
let server: TestServer;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  server = await startTestServer({ env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl } });
});
afterEach(async () => {
  await server.close();
  await fake.close();
});

const createAgent = (fields: Record<string, unknown>) => createAgentIn(server, "realm-default", fields);

const message = async (id: string, body: Record<string, unknown>) =>
  json(await server.request(`/api/agents/${id}/message`, { method: "POST", json: body }));

type Sent = { messages: Array<{ role: string; content: unknown }> };

describe("PATCH /api/agents/:id", () => {
  it("changes the prompt, model settings and tools, and keeps the agent's sessions and memory", async () => {
    const id = await createAgent({ name: "editor", model: "gpt-4o", systemPrompt: "You are terse." });
    fake.reply({ content: "Noted: the cat is Miso." });
    const first = await message(id, { message: "My cat is called Miso." });

    const patched = await server.request(`/api/agents/${id}`, {
      method: "PATCH",
      json: { systemPrompt: "You are kind.", temperature: 0.2, tools: [] },
    });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({
      id,
      name: "editor",
      systemPrompt: "You are kind.",
      temperature: 0.2,
      tools: [],
    });
    expect(await json(await server.request(`/api/agents/${id}`))).toMatchObject({
      systemPrompt: "You are kind.",
    });

    fake.reply({ content: "Miso." });
    await message(id, { message: "What is my cat called?", sessionId: first.sessionId });
    const sent = fake.requests.at(-1) as Sent;
    const system = JSON.stringify(sent.messages.filter((m) => m.role === "system"));
    expect(system).toContain("You are kind.");
    expect(system).toContain("Miso"); // the memory from before the change
    const { sessions } = await json(await server.request(`/api/agents/${id}/sessions`));
    expect(sessions.map((s: { id: string }) => s.id)).toEqual([first.sessionId]);
  });

  it("refuses a change of name or realm, an unknown field and an unknown agent", async () => {
    const id = await createAgent({ name: "fixed", model: "gpt-4o" });
    const renamed = await server.request(`/api/agents/${id}`, { method: "PATCH", json: { name: "other" } });
    expect(renamed.status).toBe(400);
    expect((await json(renamed)).error).toContain("name");
    const missing = await server.request("/api/agents/agent-nope", {
      method: "PATCH",
      json: { temperature: 1 },
    });
    expect(missing.status).toBe(404);
    const badModel = await server.request(`/api/agents/${id}`, {
      method: "PATCH",
      json: { model: "no-such-model" },
    });
    expect(badModel.status).toBeGreaterThanOrEqual(400);
    expect(badModel.status).toBeLessThan(500);
    expect((await json(await server.request(`/api/agents/${id}`))).model).toBe("gpt-4o");
  });
});

describe("GET /api/agents/:id/sessions/:sessionId", () => {
  it("answers the session with its messages in order, the tool calls (by function id) and what they returned included", async () => {
    server.service.engine.worker("test").registerFunction(
      {
        id: "test::weather",
        description: "Weather for a city",
        input: z.strictObject({ city: z.string() }),
      },
      (input) => ({ city: input.city, sky: "clear" }),
    );
    const id = await createAgent({ name: "forecaster", model: "gpt-4o", tools: ["test::weather"] });
    fake.reply(
      { toolCalls: [{ name: "test__weather", arguments: { city: "Oslo" } }] },
      { content: "Clear in Oslo." },
    );
    const reply = await message(id, { message: "Weather in Oslo?" });
    expect(reply.toolCalls).toEqual([
      expect.objectContaining({
        toolName: "test::weather",
        input: { city: "Oslo" },
        output: { city: "Oslo", sky: "clear" },
      }),
    ]);
    fake.reply({ content: "You're welcome." });
    await message(id, { message: "Thanks", sessionId: reply.sessionId });

    const transcript = await json(await server.request(`/api/agents/${id}/sessions/${reply.sessionId}`));
    expect(transcript.session).toMatchObject({ id: reply.sessionId, agentId: id, messageCount: 4 });
    expect(transcript.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "Weather in Oslo?"],
      ["assistant", "Clear in Oslo."],
      ["user", "Thanks"],
      ["assistant", "You're welcome."],
    ]);
    expect(transcript.messages[1].toolCalls).toEqual([
      expect.objectContaining({
        toolName: "test::weather",
        input: { city: "Oslo" },
        output: { city: "Oslo", sky: "clear" },
      }),
    ]);
    expect(transcript.messages[3].toolCalls).toBeUndefined();
    expect(transcript.nextCursor).toBeNull();

    const firstPage = await json(
      await server.request(`/api/agents/${id}/sessions/${reply.sessionId}?limit=3`),
    );
    expect(firstPage.messages).toHaveLength(3);
    const rest = await json(
      await server.request(
        `/api/agents/${id}/sessions/${reply.sessionId}?limit=3&cursor=${firstPage.nextCursor}`,
      ),
    );
    expect(rest.messages.map((m: { content: string }) => m.content)).toEqual(["You're welcome."]);
  });

  it("answers 404 for a session the agent does not have", async () => {
    const id = await createAgent({ name: "empty", model: "gpt-4o" });
    const response = await server.request(`/api/agents/${id}/sessions/session-nope`);
    expect(response.status).toBe(404);
    expect((await json(response)).error).toContain("session-nope");
  });
});
