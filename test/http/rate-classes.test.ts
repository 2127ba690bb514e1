import { afterEach, describe, expect, it } from "vitest";
import { rateClassOf } from "../../src/http/rate-limit/classes.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.ts";
import { json, startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer | undefined;
let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await server?.close();
  await fake?.close();
  server = undefined;
  fake = undefined;
});

describe("rate classes of routes that run an LLM turn (DESIGN §6)", () => {
  it("classes agent message and pulse invoke as message", () => {
    for (const route of ["/api/agents/:id/message", "/api/pulse/invoke"]) {
      expect(rateClassOf("POST", route), route).toBe("message");
    }
    // The other pulse writes stay in the write class.
    expect(rateClassOf("POST", "/api/pulse/register")).toBe("write");
    expect(rateClassOf("PATCH", "/api/pulse/:realmId/:agentId")).toBe("write");
  });

  it("POST /api/pulse/invoke counts against the message bucket, not the write bucket", async () => {
    server = await startTestServer({
      rateLimits: { read: 100, write: 100, message: 1, workflow_run: 100 },
      rateLimitAdmin: true,
    });
    // The body is refused (no agent), but only after the request has been counted.
    const first = await server.request("/api/pulse/invoke", { method: "POST", json: {} });
    expect(first.status).toBe(400);
    expect(first.headers.get("ratelimit-limit")).toBe("1");
    const second = await server.request("/api/pulse/invoke", { method: "POST", json: {} });
    expect(second.status).toBe(429);
    // The write bucket is untouched.
    const register = await server.request("/api/pulse/register", { method: "POST", json: {} });
    expect(register.status).toBe(400);
    expect(register.headers.get("ratelimit-limit")).toBe("100");
  });

  it("counts refused keys against their address on /metrics and the generic webhook too", async () => {
    server = await startTestServer({
      rateLimits: { read: 3, write: 3, message: 3, workflow_run: 3 },
      rateLimitAdmin: true,
    });
    const guess = (path: string, method = "GET") =>
      server?.request(path, { method, key: "aos_guess", ...(method === "POST" ? { json: {} } : {}) });
    for (const [path, method] of [
      ["/metrics", "GET"],
      ["/webhook/anything", "POST"],
    ] as const) {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await guess(path, method))?.status ?? 0);
      expect(statuses.slice(0, 3), path).toEqual([401, 401, 401]);
      expect(statuses.slice(3), path).toEqual([429, 429]);
    }
  });

  it("spends the message budget when a realm key runs an agent turn through the generic webhook", async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      rateLimits: { read: 100, write: 100, message: 1, workflow_run: 100 },
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl },
    });
    const created = await server.request("/api/keys", { method: "POST", json: { realmId: "realm-default" } });
    const { key } = await json(created);
    const agent = await server.request("/api/agents", {
      method: "POST",
      json: { name: "webhook agent", model: "gpt-4o", realmId: "realm-default" },
    });
    const { id: agentId } = await json(agent);
    const bound = await server.request("/api/channels", {
      method: "POST",
      json: { platform: "webhook", channelId: "support", agentId },
    });
    expect(bound.status).toBe(201);
    const send = () => server?.request("/webhook/support", { method: "POST", key, json: { text: "hi" } });
    const first = await send();
    expect(first?.status, await first?.text()).toBe(200);
    expect(first?.headers.get("ratelimit-limit")).toBe("1");
    // The same turn as POST /api/agents/:id/message: a key must not get around that budget here.
    const second = await send();
    expect(second?.status).toBe(429);
    expect(fake.requests).toHaveLength(1);
  });
});
