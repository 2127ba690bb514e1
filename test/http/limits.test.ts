import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { call, createAgent, newRealm, realmKey } from "../helpers/control-plane.ts";
import { startFakeOpenAI } from "../helpers/fake-openai.ts";
import { json, startTestServer, TEST_ADMIN_KEY, type TestServer } from "../helpers/server.ts";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("rate limits", () => {
  it("refuses requests beyond the class limit with 429, retryAfter, Retry-After and RateLimit headers", async () => {
    server = await startTestServer({
      rateLimits: { read: 3, write: 100, message: 60, workflow_run: 100 },
      rateLimitAdmin: true,
    });
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await server.request("/api/health");
      statuses.push(last.status);
      if (i === 0) expect(last.headers.get("ratelimit-remaining")).toBe("2");
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const body = await json(last as Response);
    expect(body.error).toMatch(/Rate limit exceeded: 3 read requests per hour; try again in \d+ s/);
    expect(body.error).toContain("AGENTOS_RATE_LIMITS");
    expect(body.retryAfter).toBeGreaterThan(0);
    expect(Number((last as Response).headers.get("retry-after"))).toBe(body.retryAfter);
    expect((last as Response).headers.get("ratelimit-limit")).toBe("3");
    expect((last as Response).headers.get("x-frame-options")).toBe("DENY");
  });

  it("keeps separate buckets per class", async () => {
    server = await startTestServer({
      rateLimits: { read: 1, write: 1, message: 60, workflow_run: 100 },
      rateLimitAdmin: true,
    });
    expect((await server.request("/api/health")).status).toBe(200);
    expect((await server.request("/api/health")).status).toBe(429);
    expect((await server.request("/api/keys", { method: "POST", json: {} })).status).toBe(201);
  });

  it("ignores X-Forwarded-For unless a trusted proxy is configured", async () => {
    server = await startTestServer({
      rateLimits: { read: 1, write: 100, message: 60, workflow_run: 100 },
      rateLimitAdmin: true,
    });
    expect((await server.request("/api/health", { headers: { "x-forwarded-for": "10.0.0.1" } })).status).toBe(
      200,
    );
    expect((await server.request("/api/health", { headers: { "x-forwarded-for": "10.0.0.2" } })).status).toBe(
      429,
    );
    await server.close();
    server = await startTestServer({
      rateLimits: { read: 1, write: 100, message: 60, workflow_run: 100 },
      rateLimitAdmin: true,
      trustProxy: ["127.0.0.1"],
    });
    expect((await server.request("/api/health", { headers: { "x-forwarded-for": "10.0.0.1" } })).status).toBe(
      200,
    );
    expect((await server.request("/api/health", { headers: { "x-forwarded-for": "10.0.0.2" } })).status).toBe(
      200,
    );
  });
});

describe("IPv6 clients", () => {
  it("count as their /64: addresses of one network share a budget, another network has its own", async () => {
    server = await startTestServer({
      rateLimits: { read: 1, write: 100, message: 60, workflow_run: 100 },
      rateLimitAdmin: true,
      trustProxy: ["127.0.0.1"],
    });
    const from = (address: string) =>
      server?.request("/api/health", { headers: { "x-forwarded-for": address } });
    expect((await from("2001:db8:1:2::1"))?.status).toBe(200);
    const sameNetwork = await from("2001:db8:1:2:aaaa:bbbb:cccc:dddd");
    expect(sameNetwork?.status).toBe(429);
    expect((await from("2001:db8:1:3::1"))?.status).toBe(200);
  });
});

/** A server that allows two requests in flight, with /api/slow answering after 300 ms. */
async function serverWithSlowRoute(): Promise<TestServer> {
  const started = await startTestServer({ maxInFlight: 2 });
  const worker = started.service.engine.worker("slow");
  worker.registerFunction(
    { id: "slow::wait" },
    () => new Promise((resolve) => setTimeout(() => resolve({}), 300)),
  );
  worker.registerTrigger({ type: "http", function_id: "slow::wait", config: { api_path: "/api/slow" } });
  return started;
}

describe("request limits", () => {
  it("answers 503 beyond the in-flight limit", async () => {
    server = await serverWithSlowRoute();
    const statuses = await Promise.all(
      [1, 2, 3, 4].map(() => server?.request("/api/slow").then((r) => r.status)),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(2);
    expect(statuses.filter((status) => status === 503)).toHaveLength(2);
  });

  it("frees the in-flight slots of requests whose clients hang up while they are handled", async () => {
    server = await serverWithSlowRoute();
    const abandoned = [1, 2].map(() => {
      const controller = new AbortController();
      const pending = server?.request("/api/slow", { signal: controller.signal }).catch(() => undefined);
      setTimeout(() => controller.abort(), 100);
      return pending;
    });
    await Promise.all(abandoned);
    await new Promise((resolve) => setTimeout(resolve, 400));
    for (let i = 0; i < 3; i++) expect((await server.request("/api/health")).status).toBe(200);
  });

  it("answers 504 when a function outlives the request timeout", async () => {
    server = await startTestServer({ requestTimeoutMs: 200 });
    const worker = server.service.engine.worker("slow");
    worker.registerFunction({ id: "slow::forever" }, () => new Promise(() => undefined));
    worker.registerTrigger({
      type: "http",
      function_id: "slow::forever",
      config: { api_path: "/api/forever" },
    });
    const response = await server.request("/api/forever");
    expect(response.status).toBe(504);
    expect((await json(response)).error).toMatch(/timed out/);
  });
});

describe("in-flight limits and clients that hang up", () => {
  it("keeps counting a request whose client hung up until its function has finished, so hanging up cannot run more at once than the limit", async () => {
    server = await startTestServer({ maxInFlight: 2, maxInFlightPerClient: 2 });
    let running = 0;
    let most = 0;
    const worker = server.service.engine.worker("slow");
    worker.registerFunction({ id: "slow::counted" }, async () => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 400));
      running--;
      return {};
    });
    worker.registerTrigger({
      type: "http",
      function_id: "slow::counted",
      config: { api_path: "/api/counted" },
    });
    // Each request is abandoned once its function has started: without the count, each frees its slot.
    for (let i = 0; i < 6; i++) {
      const controller = new AbortController();
      const pending = server.request("/api/counted", { signal: controller.signal }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
      controller.abort();
      await pending;
    }
    expect(most).toBeLessThanOrEqual(2);
    // Once the functions have finished, their slots are free again.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await server.request("/api/health")).status).toBe(200);
    expect((await server.request("/api/health")).status).toBe(200);
  });

  it("closes a connection that stops reading its answers, so it cannot hold slots for as long as it stays open", async () => {
    server = await startTestServer({
      maxInFlight: 20,
      maxInFlightPerClient: 100,
      receiveTimeoutMs: 1000,
      headersTimeoutMs: 500,
    });
    // 40 requests for the OpenAPI document (about 300 kB each), pipelined on one connection that is
    // never read: the answers cannot leave, so the requests stay in flight.
    const request = `GET /api/openapi.json HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_KEY}\r\n\r\n`;
    const socket = connect({ host: "127.0.0.1", port: Number(new URL(server.url).port) }, () => {
      socket.pause();
      socket.write(request.repeat(40));
    });
    socket.on("error", () => undefined);
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await server.request("/api/health")).status).toBe(503);
      // Once its answers have not moved for the receive timeout, the connection is closed and its
      // slots are free, though the client never hung up.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect((await server.request("/api/health")).status).toBe(200);
    } finally {
      socket.destroy();
    }
  });

  it("leaves a connection alone while its function works longer than the receive timeout", async () => {
    server = await startTestServer({ receiveTimeoutMs: 300, headersTimeoutMs: 200 });
    const worker = server.service.engine.worker("slow");
    worker.registerFunction(
      { id: "slow::big" },
      () => new Promise((resolve) => setTimeout(() => resolve({ text: "x".repeat(2_000_000) }), 1000)),
    );
    worker.registerTrigger({ type: "http", function_id: "slow::big", config: { api_path: "/api/big" } });
    const response = await server.request("/api/big");
    expect(response.status).toBe(200);
    expect((await json(response)).text).toHaveLength(2_000_000);
  });
});

describe("a realm's share of the requests in flight", () => {
  it("refuses a realm's keys past AGENTOS_MAX_IN_FLIGHT_PER_REALM (429), whatever their addresses, and no other realm or the operator", async () => {
    const model = await startFakeOpenAI();
    server = await startTestServer({
      maxInFlightPerRealm: 2,
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.baseUrl },
    });
    try {
      const busy = await newRealm(server);
      const busyKey = await realmKey(server, busy);
      const agentId = await createAgent(server, busy);
      const other = await realmKey(server, await newRealm(server));
      model.reply({ content: "slow", delayMs: 1500 }, { content: "slow", delayMs: 1500 });
      const slow = [1, 2].map(() =>
        call(server as TestServer, "POST", `/api/agents/${agentId}/message`, { message: "hi" }, busyKey),
      );
      // Both are at work (their model calls have arrived) before the third is asked.
      while (model.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      const refused = await call(
        server,
        "POST",
        `/api/agents/${agentId}/message`,
        { message: "hi" },
        busyKey,
      );
      expect(refused.status).toBe(429);
      expect(refused.body.error).toContain("AGENTOS_MAX_IN_FLIGHT_PER_REALM");
      expect((await server.request("/api/health", { key: other })).status).toBe(200);
      expect((await server.request("/api/health")).status).toBe(200);
      expect((await Promise.all(slow)).map((answer) => answer.status)).toEqual([200, 200]);
      // Their slots are back once they have answered.
      expect((await server.request("/api/health", { key: busyKey })).status).toBe(200);
    } finally {
      await model.close();
    }
  });
});
