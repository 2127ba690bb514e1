import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { isInternalFunction } from "../../../src/shared/internal-functions.ts";
import { MAX_TOOL_RESULT_CHARS } from "../../../src/workers/agents/tools.ts";
import { newRealm, realmKey, recordTopic } from "../../helpers/control-plane.ts";
import { type FakeOpenAI, fakeCostEvent, startFakeOpenAI } from "../../helpers/fake-openai.ts";
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

async function createAgent(body: Record<string, unknown>): Promise<string> {
  const response = await server.request("/api/agents", { method: "POST", json: body });
  expect(response.status).toBe(201);
  return (await json(response)).id;
}

type SentMessages = {
  messages: Array<{ role: string; content: unknown }>;
  tools?: Array<{ function: { name: string } }>;
};

describe("agents over HTTP", () => {
  it("creates an agent with defaults from its profile and the best model of a configured provider", async () => {
    // Only OpenAI has a key here: the catalog's default (an Anthropic model) would answer 503 to every message.
    const id = await createAgent({ name: "helper" });
    const agent = await json(await server.request(`/api/agents/${id}`));
    expect(agent).toMatchObject({
      id,
      name: "helper",
      model: "gpt-4o",
      toolProfile: "chat",
      tools: ["tool::web_search", "tool::web_fetch", "memory::recall", "memory::store"],
      realmId: "realm-default",
      status: "active",
    });
    const { agents } = await json(await server.request("/api/agents"));
    expect(agents.map((a: { id: string }) => a.id)).toContain(id);
  });

  it.each([
    [{}, "name"],
    [{ name: "x", temperature: 3 }, "temperature"],
    [{ name: "x", toolProfile: "wizard" }, "toolProfile"],
    [{ name: "x", extra: true }, "extra"],
  ])("refuses %j with 400 naming %s", async (body, field) => {
    const response = await server.request("/api/agents", { method: "POST", json: body });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain(field);
  });

  it("refuses an unknown model with 404 saying where the models are listed", async () => {
    const response = await server.request("/api/agents", {
      method: "POST",
      json: { name: "x", model: "gpt-9000" },
    });
    expect(response.status).toBe(404);
    expect((await json(response)).error).toContain("/api/models");
  });

  it("talks: a new session is created, its id returned, and reusing it sends the history", async () => {
    const id = await createAgent({ name: "talker", model: "gpt-4o", systemPrompt: "You are terse." });
    fake.reply({ content: "Hello!" }, { content: "You said hi." });
    const first = await json(
      await server.request(`/api/agents/${id}/message`, { method: "POST", json: { message: "hi" } }),
    );
    expect(first).toMatchObject({
      content: "Hello!",
      model: "gpt-4o",
      usage: { inputTokens: 12, outputTokens: 5 },
    });
    expect(first.sessionId).toMatch(/^session-/);
    const second = await json(
      await server.request(`/api/agents/${id}/message`, {
        method: "POST",
        json: { message: "what did I say?", sessionId: first.sessionId },
      }),
    );
    expect(second.content).toBe("You said hi.");
    const sent = fake.requests[1] as SentMessages;
    expect(sent.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "You are terse."],
      ["user", "hi"],
      ["assistant", "Hello!"],
      ["user", "what did I say?"],
    ]);
    const { sessions } = await json(await server.request(`/api/agents/${id}/sessions`));
    expect(sessions).toEqual([
      expect.objectContaining({ id: first.sessionId, agentId: id, messageCount: 4 }),
    ]);
  });

  it("calls its tools through the engine and answers with their results", async () => {
    const calls: unknown[] = [];
    server.service.engine.worker("test").registerFunction(
      {
        id: "test::weather",
        description: "Weather for a city",
        input: z.strictObject({ city: z.string() }),
      },
      (input) => {
        calls.push(input);
        return { city: input.city, sky: "clear" };
      },
    );
    const id = await createAgent({ name: "forecaster", model: "gpt-4o", tools: ["test::weather"] });
    fake.reply(
      { toolCalls: [{ name: "test__weather", arguments: { city: "Oslo" } }] },
      { content: "Clear in Oslo." },
    );
    const reply = await json(
      await server.request(`/api/agents/${id}/message`, { method: "POST", json: { message: "Weather?" } }),
    );
    expect(reply.content).toBe("Clear in Oslo.");
    expect(calls).toEqual([{ city: "Oslo" }]);
    const offered = (fake.requests[0] as SentMessages).tools?.map((t) => t.function.name);
    expect(offered).toEqual(["test__weather"]);
    expect(JSON.stringify((fake.requests[1] as SentMessages).messages.at(-1))).toContain("clear");
  });

  it("sends the model at most MAX_TOOL_RESULT_CHARS of a tool's result, saying it was cut", async () => {
    server.service.engine
      .worker("test")
      .registerFunction({ id: "test::dump", description: "A big dump" }, () => ({
        rows: "r".repeat(MAX_TOOL_RESULT_CHARS * 2),
      }));
    const id = await createAgent({ name: "dumper", model: "gpt-4o", tools: ["test::dump"] });
    const before = fake.requests.length;
    fake.reply({ toolCalls: [{ name: "test__dump", arguments: {} }] }, { content: "Too much." });
    await server.request(`/api/agents/${id}/message`, { method: "POST", json: { message: "Dump." } });
    const sent = JSON.stringify((fake.requests[before + 1] as SentMessages).messages.at(-1));
    expect(sent.length).toBeLessThan(MAX_TOOL_RESULT_CHARS * 1.2);
    expect(sent).toContain(`these are its first ${MAX_TOOL_RESULT_CHARS}`);
  });

  it("offers the tools as they are now: after the agent's tools change and after a function comes or goes", async () => {
    const worker = server.service.engine.worker("test");
    worker.registerFunction({ id: "test::weather", description: "Weather" }, () => ({}));
    const id = await createAgent({ name: "adaptable", model: "gpt-4o", tools: ["test::*"] });
    const offered = async () => {
      const before = fake.requests.length;
      await server.request(`/api/agents/${id}/message`, { method: "POST", json: { message: "hi" } });
      return ((fake.requests[before] as SentMessages).tools ?? []).map((t) => t.function.name);
    };
    expect(await offered()).toEqual(["test__weather"]);
    worker.registerFunction({ id: "test::tides", description: "Tides" }, () => ({}));
    expect(await offered()).toEqual(["test__tides", "test__weather"]);
    const patched = await server.request(`/api/agents/${id}`, {
      method: "PATCH",
      json: { tools: ["test::tides"] },
    });
    expect(patched.status).toBe(200);
    expect(await offered()).toEqual(["test__tides"]);
    server.service.engine.unregisterFunction("test::tides");
    expect(await offered()).toEqual([]);
  });

  it("offers no tool outside the agent's capabilities", async () => {
    server.service.engine.worker("test").registerFunction({ id: "test::weather" }, () => ({}));
    const id = await createAgent({
      name: "locked",
      model: "gpt-4o",
      tools: ["test::weather"],
      capabilities: ["memory::*"],
    });
    await server.request(`/api/agents/${id}/message`, { method: "POST", json: { message: "hi" } });
    expect((fake.requests[0] as SentMessages).tools).toBeUndefined();
  });

  it("publishes each model call's cost on cost.incurred", async () => {
    const events = recordTopic(server, "cost.incurred");
    const id = await createAgent({ name: "spender", model: "gpt-4o" });
    await server.request(`/api/agents/${id}/message`, { method: "POST", json: { message: "hi" } });
    await expect.poll(() => events.length).toBe(1);
    // Exactly what ledger::spend takes (the ledger subscribes it to this topic as is).
    expect(events[0]).toEqual(
      fakeCostEvent({ realmId: "realm-default", agentId: id, sessionId: expect.stringMatching(/^session-/) }),
    );
  });

  it("refuses a message with 402 when the ledger says the agent is over budget", async () => {
    server.service.engine
      .worker("ledger")
      .registerFunction({ id: "ledger::check" }, () => ({ allowed: false, reason: "over budget" }));
    const id = await createAgent({ name: "broke", model: "gpt-4o" });
    const response = await server.request(`/api/agents/${id}/message`, {
      method: "POST",
      json: { message: "hi" },
    });
    expect(response.status).toBe(402);
    expect(fake.requests).toHaveLength(0);
  });

  it("asks the ledger again before the model call that follows a tool round trip", async () => {
    let checks = 0;
    server.service.engine.worker("ledger").registerFunction({ id: "ledger::check" }, () => {
      checks++;
      return checks === 1 ? { allowed: true } : { allowed: false, reason: "budget spent mid-turn" };
    });
    server.service.engine.worker("test").registerFunction({ id: "test::ping" }, () => ({ pong: true }));
    const id = await createAgent({ name: "frugal", model: "gpt-4o", tools: ["test::ping"] });
    fake.reply({ toolCalls: [{ name: "test__ping", arguments: {} }] }, { content: "never sent" });
    const response = await server.request(`/api/agents/${id}/message`, {
      method: "POST",
      json: { message: "hi" },
    });
    expect(response.status).toBe(402);
    expect((await json(response)).error).toBe("budget spent mid-turn");
    expect(fake.requests).toHaveLength(1);
  });

  it("refuses an agent on a provider without a key, saying which key to set (422)", async () => {
    for (const body of [
      { name: "claude", model: "sonnet" },
      { name: "fallback", model: "gpt-4o", fallbackModels: ["claude-haiku-4-5"] },
    ]) {
      const response = await server.request("/api/agents", { method: "POST", json: body });
      expect(response.status).toBe(422);
      expect((await json(response)).error).toContain("ANTHROPIC_API_KEY");
    }
    const id = await createAgent({ name: "gpt", model: "gpt-4o" });
    const patched = await server.request(`/api/agents/${id}`, { method: "PATCH", json: { model: "sonnet" } });
    expect(patched.status).toBe(422);
    expect((await json(patched)).error).toContain("agentos config set-key anthropic");
  });

  it("says which provider is not configured when its key goes away after the agent was made (503)", async () => {
    const vault = (function_id: string, payload: Record<string, unknown>) =>
      server.service.engine.trigger({ function_id, payload });
    await vault("vault::set", { key: "provider:anthropic:api_key", value: "sk-ant-test" });
    const id = await createAgent({ name: "claude", model: "sonnet" });
    await vault("vault::delete", { key: "provider:anthropic:api_key" });
    const response = await server.request(`/api/agents/${id}/message`, {
      method: "POST",
      json: { message: "hi" },
    });
    expect(response.status).toBe(503);
    expect((await json(response)).error).toContain("ANTHROPIC_API_KEY");
  });

  it("deletes an agent with its sessions: 204, then 404", async () => {
    const id = await createAgent({ name: "temp", model: "gpt-4o" });
    await server.request(`/api/agents/${id}/message`, { method: "POST", json: { message: "hi" } });
    const deleted = await server.request(`/api/agents/${id}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    expect((await server.request(`/api/agents/${id}`)).status).toBe(404);
    const leftovers = await server.service.engine.trigger({ function_id: "state::list_groups", payload: {} });
    expect(JSON.stringify(leftovers)).not.toContain(id);
  });
});

describe("agents using the chat profile's web tools", () => {
  it("calls tool::web_fetch on a page and answers from it", async () => {
    const { createServer } = await import("node:http");
    const page = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><script>x()</script><body><h1>Opening hours</h1><p>9&nbsp;to&nbsp;5</p></body></html>");
    });
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
    const { port } = page.address() as { port: number };
    await server.close();
    server = await startTestServer({
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl, AGENTOS_ALLOW_PRIVATE_NETWORK: "1" },
    });
    try {
      const id = await createAgent({ name: "browser", model: "gpt-4o" });
      fake.reply(
        { toolCalls: [{ name: "tool__web_fetch", arguments: { url: `http://127.0.0.1:${port}/hours` } }] },
        { content: "Open 9 to 5." },
      );
      const reply = await json(
        await server.request(`/api/agents/${id}/message`, {
          method: "POST",
          json: { message: "When are you open?" },
        }),
      );
      expect(reply.content).toBe("Open 9 to 5.");
      const offered = (fake.requests[0] as SentMessages).tools?.map((t) => t.function.name) ?? [];
      expect(offered).toEqual(expect.arrayContaining(["tool__web_fetch", "tool__web_search"]));
      const toolResult = JSON.stringify((fake.requests[1] as SentMessages).messages.at(-1));
      expect(toolResult).toContain("Opening hours 9 to 5");
      expect(toolResult).not.toContain("x()");
    } finally {
      await new Promise((resolve) => page.close(resolve));
    }
  });
});

describe("agent memory", () => {
  it("remembers what was said, recalls it on request and into later turns, and forgets it on delete", async () => {
    const id = await createAgent({ name: "elephant", model: "gpt-4o" });
    fake.reply({ content: "Noted: your cat is called Miso." });
    await server.request(`/api/agents/${id}/message`, {
      method: "POST",
      json: { message: "My cat is called Miso" },
    });
    const recalled = await expect
      .poll(
        async () =>
          (
            await json(
              await server.request(`/api/agents/${id}/memory`, {
                method: "POST",
                json: { query: "cat name" },
              }),
            )
          ).results,
      )
      .toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            agentId: id,
            content: "My cat is called Miso",
            score: expect.any(Number),
          }),
        ]),
      );
    void recalled;
    fake.reply({ content: "Miso." });
    await server.request(`/api/agents/${id}/message`, {
      method: "POST",
      json: { message: "What is my cat called?" },
    });
    const system = (fake.requests.at(-1) as SentMessages).messages[0];
    expect(system?.role).toBe("system");
    expect(String(system?.content)).toContain("My cat is called Miso");
    const limited = await server.request(`/api/agents/${id}/memory`, {
      method: "POST",
      json: { query: "cat", limit: 500 },
    });
    expect(limited.status).toBe(400);
    await server.request(`/api/agents/${id}`, { method: "DELETE" });
    const after = await server.service.engine.trigger({
      function_id: "memory::recall",
      payload: { agentId: id, query: "cat" },
    });
    expect(after).toEqual({ results: [] });
  });
});

describe("agent isolation", () => {
  it("refuses tools that name the service's internal functions", async () => {
    for (const tools of [
      ["state::*"],
      ["vault::get"],
      ["agent::message"],
      ["publish"],
      ["auth::keys::create"],
    ]) {
      const response = await server.request("/api/agents", {
        method: "POST",
        json: { name: "x", model: "gpt-4o", tools },
      });
      expect(response.status, JSON.stringify(tools)).toBe(400);
      expect((await json(response)).error).toContain("internal function");
    }
  });

  it("never offers or runs an internal function, even with tools and capabilities of *", async () => {
    const id = await createAgent({ name: "greedy", model: "gpt-4o", tools: ["*"], capabilities: ["*"] });
    fake.reply(
      { toolCalls: [{ name: "state__set", arguments: { scope: "api_keys", key: "x", value: 1 } }] },
      { content: "done" },
    );
    await server.request(`/api/agents/${id}/message`, { method: "POST", json: { message: "hi" } });
    const offered = (fake.requests[0] as SentMessages).tools?.map((t) => t.function.name) ?? [];
    expect(offered.length).toBeGreaterThan(0);
    // Provider-safe names map `::` to `__`; none of them may come back to an internal function.
    for (const name of offered) expect(isInternalFunction(name.replaceAll("__", "::")), name).toBe(false);
    expect(offered).not.toContain("state__set");
    // The service's own sweeps are its plumbing too, whatever their group.
    expect(offered.filter((name) => /__sweep/.test(name))).toEqual([]);
    expect(
      await server.service.engine.trigger({
        function_id: "state::get",
        payload: { scope: "api_keys", key: "x" },
      }),
    ).toBeNull();
  });

  it("keeps a realm-bound key to its own realm's agents, over /api and /v1", async () => {
    const realm2 = await newRealm(server, "r2");
    const key = await realmKey(server, realm2);
    const theirs = await createAgent({ name: "admins-agent", model: "gpt-4o" });
    const mine = (
      await json(
        await server.request("/api/agents", {
          method: "POST",
          key,
          json: { name: "mine", model: "gpt-4o" },
        }),
      )
    ).id;
    expect((await json(await server.request(`/api/agents/${mine}`, { key }))).realmId).toBe(realm2);
    const listed = await json(await server.request("/api/agents", { key }));
    expect(listed.agents.map((a: { id: string }) => a.id)).toEqual([mine]);
    for (const [path, method, body] of [
      [`/api/agents/${theirs}`, "GET", undefined],
      [`/api/agents/${theirs}/message`, "POST", { message: "hi" }],
      [`/api/agents/${theirs}/sessions`, "GET", undefined],
      [`/api/agents/${theirs}/memory`, "POST", { query: "x" }],
      [`/api/agents/${theirs}`, "DELETE", undefined],
    ] as const) {
      // As if it did not exist: the same status and words as an agent that never was.
      const response = await server.request(path, { method, key, json: body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await json(response)).error).toBe(`Agent ${theirs} not found`);
    }
    const v1 = await server.request("/v1/chat/completions", {
      method: "POST",
      key,
      json: { model: `agent:${theirs}`, messages: [{ role: "user", content: "hi" }] },
    });
    expect(v1.status).toBe(404);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("sessions under concurrent use", () => {
  it("keeps every message when two turns on one session run at once", async () => {
    const id = await createAgent({ name: "busy", model: "gpt-4o" });
    const first = await json(
      await server.request(`/api/agents/${id}/message`, { method: "POST", json: { message: "m0" } }),
    );
    await Promise.all(
      ["a", "b"].map((message) =>
        server.request(`/api/agents/${id}/message`, {
          method: "POST",
          json: { message, sessionId: first.sessionId },
        }),
      ),
    );
    const { sessions } = await json(await server.request(`/api/agents/${id}/sessions`));
    expect(sessions[0].messageCount).toBe(6);
    const scope = `agent_messages:${id}:${first.sessionId}`;
    const page = (await server.service.engine.trigger({
      function_id: "state::list",
      payload: { scope },
    })) as {
      items: Array<{ value: { content: string } }>;
    };
    expect(
      page.items
        .map((item) => item.value.content)
        .filter((c) => c !== "ok")
        .sort(),
    ).toEqual(["a", "b", "m0"]);
    expect(page.items).toHaveLength(6);
  });

  it("keeps both turns when two start the same new session of the caller's own id at once", async () => {
    const id = await createAgent({ name: "twins", model: "gpt-4o" });
    const replies = await Promise.all(
      ["x", "y"].map(async (message) =>
        json(
          await server.request(`/api/agents/${id}/message`, {
            method: "POST",
            json: { message, sessionId: "my-thread" },
          }),
        ),
      ),
    );
    expect(replies.map((reply) => reply.sessionId)).toEqual(["my-thread", "my-thread"]);
    const session = await json(await server.request(`/api/agents/${id}/sessions/my-thread`));
    expect(session.session.messageCount).toBe(4);
    expect(session.messages.map((message: { content: string }) => message.content).sort()).toEqual([
      "ok",
      "ok",
      "x",
      "y",
    ]);
  });

  it("leaves no session behind when the model fails before answering", async () => {
    const id = await createAgent({ name: "unlucky", model: "gpt-4o" });
    fake.reply({ status: 400 });
    const failed = await server.request(`/api/agents/${id}/message`, {
      method: "POST",
      json: { message: "hi" },
    });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    const { sessions } = await json(await server.request(`/api/agents/${id}/sessions`));
    expect(sessions).toEqual([]);
  });
});
