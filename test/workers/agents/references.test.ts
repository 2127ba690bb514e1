import { describe, expect, it } from "vitest";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { serverWithFakeModel, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { startTestServer } from "../../helpers/server.ts";

const env = serverWithFakeModel({}, { shared: true });

describe("what an agent names is checked when it is written", () => {
  it("refuses tools that name no function (400 naming them), on create and on PATCH", async () => {
    const realmId = await newRealm(env.server);
    const created = await call(env.server, "POST", "/api/agents", {
      name: "tooly",
      model: "gpt-4o",
      realmId,
      tools: ["tool::web_fetch", "tool::nope", "tool::nada_*"],
    });
    expect(created.status).toBe(400);
    expect(created.body.error).toContain('"tool::nope", "tool::nada_*" name no function');
    expect(created.body.error).toContain("GET /api/functions");
    const id = await createAgent(env.server, realmId, { tools: ["tool::file_*"] });
    const patched = await call(env.server, "PATCH", `/api/agents/${id}`, { tools: ["memory::nope"] });
    expect(patched.status).toBe(400);
    expect(patched.body.error).toContain('"memory::nope" names no function');
  });

  it("takes tools of a worker or integration that has not connected yet", async () => {
    const realmId = await newRealm(env.server);
    const id = await createAgent(env.server, realmId, {
      tools: ["mcp::github::*", "http::weather::forecast", "myworker::summarise", "tool::web_*"],
    });
    expect((await call(env.server, "GET", `/api/agents/${id}`)).body.tools).toContain("myworker::summarise");
  });

  it("keeps names unique per realm: 409 naming the holder; another realm, or after a delete, may use it", async () => {
    const realmId = await newRealm(env.server);
    const first = await createAgent(env.server, realmId, { name: "dup" });
    const second = await call(env.server, "POST", "/api/agents", { name: "dup", model: "gpt-4o", realmId });
    expect(second.status).toBe(409);
    expect(second.body.error).toContain(first);
    await createAgent(env.server, await newRealm(env.server), { name: "dup" });
    expect((await call(env.server, "DELETE", `/api/agents/${first}`)).status).toBe(204);
    await createAgent(env.server, realmId, { name: "dup" });
  });

  it("lets exactly one of several racing creates have a name", async () => {
    const realmId = await newRealm(env.server);
    const statuses = await Promise.all(
      Array.from({ length: 6 }, () =>
        call(env.server, "POST", "/api/agents", { name: "racer", model: "gpt-4o", realmId }).then(
          (r) => r.status,
        ),
      ),
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(5);
  });

  it.each(["gpt-4o", "sonnet"])(
    "refuses the name %s, which /v1 would read as the catalog model",
    async (name) => {
      const response = await call(env.server, "POST", "/api/agents", { name, model: "gpt-4o" });
      expect(response.status).toBe(400);
      expect(response.body.error).toContain("catalog model");
    },
  );
});

describe("sessions named by the caller", () => {
  it("answers 404 for a session id of the service's form that does not exist; a caller's own id starts one", async () => {
    const id = await createAgent(env.server, await newRealm(env.server));
    const typo = "session-00000000-0000-4000-8000-000000000000";
    const missing = await call(env.server, "POST", `/api/agents/${id}/message`, {
      message: "hi",
      sessionId: typo,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toContain(`/api/agents/${id}/sessions`);
    env.fake.reply({ content: "one" }, { content: "two" });
    const own = await call(env.server, "POST", `/api/agents/${id}/message`, {
      message: "hi",
      sessionId: "thread-7",
    });
    expect(own.body.sessionId).toBe("thread-7");
    await call(env.server, "POST", `/api/agents/${id}/message`, { message: "again", sessionId: "thread-7" });
    const session = await call(env.server, "GET", `/api/agents/${id}/sessions/thread-7`);
    expect(session.body.messages).toHaveLength(4);
  });
});

describe("the default model", () => {
  it("is the catalog's default when its provider has a key, and is refused with the key to set when none has", async () => {
    const anthropic = await startTestServer({ env: { ANTHROPIC_API_KEY: "sk-ant-test" } });
    const bare = await startTestServer({ env: {} });
    try {
      const made = await call(anthropic, "POST", "/api/agents", { name: "a" });
      expect((await call(anthropic, "GET", `/api/agents/${made.body.id}`)).body.model).toBe(
        "claude-sonnet-4-6",
      );
      const refused = await call(bare, "POST", "/api/agents", { name: "a" });
      expect(refused.status).toBe(422);
      expect(refused.body.error).toContain("ANTHROPIC_API_KEY");
    } finally {
      await anthropic.close();
      await bare.close();
    }
  });
});

describe("an agent on an unlisted model of a local provider", () => {
  it("keeps the provider in its model (ollama/<model>), so its messages reach that model", async () => {
    const ollama = await startFakeOpenAI();
    const server = await startTestServer({ env: { OLLAMA_BASE_URL: ollama.baseUrl } });
    try {
      const made = await call(server, "POST", "/api/agents", {
        name: "on-premises",
        model: "ollama/some-model:7b",
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const agent = await call(server, "GET", `/api/agents/${made.body.id}`);
      expect(agent.body.model).toBe("ollama/some-model:7b");
      const answered = await call(server, "POST", `/api/agents/${made.body.id}/message`, { message: "hi" });
      expect(answered.status).toBe(200);
      expect(ollama.requests.map((request) => request.model)).toEqual(["some-model:7b"]);
      // A local model named like a hosted one stays the local one.
      const patched = await call(server, "PATCH", `/api/agents/${made.body.id}`, { model: "ollama/gpt-4o" });
      expect(patched.body.model).toBe("ollama/gpt-4o");
      // A listed model keeps its catalog id.
      const listed = await call(server, "PATCH", `/api/agents/${made.body.id}`, { model: "ollama/llama3.3" });
      expect(listed.body.model).toBe("llama3.3");
    } finally {
      await server.close();
      await ollama.close();
    }
  });
});
