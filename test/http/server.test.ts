import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { conflict } from "../../src/shared/errors.ts";
import {
  json,
  SECURITY_HEADERS,
  securityHeadersOf,
  startTestServer,
  type TestServer,
} from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  const worker = server.service.engine.worker("test");
  worker.registerFunction(
    {
      id: "test::echo",
      input: z.strictObject({ id: z.string(), q: z.string().optional(), name: z.string().optional() }),
    },
    (input, ctx) => ({ input, auth: ctx.auth.kind }),
  );
  worker.registerTrigger({
    type: "http",
    function_id: "test::echo",
    config: { api_path: "/api/test/echo/:id", http_method: "POST" },
  });
  worker.registerFunction({ id: "test::create" }, () => ({ created: true }));
  worker.registerTrigger({
    type: "http",
    function_id: "test::create",
    config: { api_path: "/api/test/things", http_method: "POST", status: 201 },
  });
  worker.registerFunction({ id: "test::remove" }, () => undefined);
  worker.registerTrigger({
    type: "http",
    function_id: "test::remove",
    config: { api_path: "/api/test/things/:id", http_method: "DELETE" },
  });
  worker.registerFunction({ id: "test::conflict" }, () => {
    throw conflict("stale version");
  });
  worker.registerTrigger({
    type: "http",
    function_id: "test::conflict",
    config: { api_path: "/api/test/conflict" },
  });
  worker.registerFunction({ id: "test::crash" }, () => {
    throw new Error("secret internal detail");
  });
  worker.registerTrigger({
    type: "http",
    function_id: "test::crash",
    config: { api_path: "/api/test/crash" },
  });
});

afterAll(() => server.close());

describe("HTTP front door", () => {
  it("answers /healthz without a key", async () => {
    const response = await server.request("/healthz", { key: null });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ status: "ok" });
  });

  it("serves /api/health with status, version, workers and uptime", async () => {
    const response = await server.request("/api/health");
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({ status: "ok", version: expect.any(String) });
    expect(body.workers).toBeGreaterThan(0);
    expect(body.uptime).toBeGreaterThanOrEqual(0);
  });

  it("tells a key who it is, and an admin key which workers run here", async () => {
    expect(await json(await server.request("/api/whoami"))).toMatchObject({ kind: "admin" });
    const { workers, count } = await json(await server.request("/api/workers"));
    expect(count).toBe(workers.length);
    expect(workers.find((worker: { name: string }) => worker.name === "api")).toMatchObject({
      status: "available",
      function_count: expect.any(Number),
    });
    const realm = await json(
      await server.request("/api/realms", { method: "POST", json: { name: "w", owner: "o" } }),
    );
    const key = (
      await json(await server.request("/api/keys", { method: "POST", json: { realmId: realm.id } }))
    ).key;
    expect(await json(await server.request("/api/whoami", { key }))).toMatchObject({
      kind: "realm",
      realmId: realm.id,
    });
    expect((await server.request("/api/workers", { key })).status).toBe(403);
  });

  it("refuses /api routes without a key or with a wrong key with 401 and security headers", async () => {
    for (const key of [null, "wrong-key"]) {
      const response = await server.request("/api/health", { key });
      expect(response.status).toBe(401);
      expect((await json(response)).error).toMatch(/API key/);
      expect(securityHeadersOf(response)).toEqual(SECURITY_HEADERS);
    }
  });

  it("tells no cache to keep an answer (a minted key, an error); the console's files keep their own rule", async () => {
    const minted = await server.request("/api/keys", { method: "POST", json: { name: "cached?" } });
    expect(minted.status).toBe(201);
    expect(minted.headers.get("cache-control")).toBe("no-store");
    const refused = await server.request("/api/health", { key: null });
    expect(refused.headers.get("cache-control")).toBe("no-store");
    const page = await server.request("/", { key: null });
    expect(page.headers.get("cache-control")).not.toBe("no-store");
  });

  it("answers unknown routes with 404 and the security headers", async () => {
    for (const path of ["/api/nope", "/nope"]) {
      const response = await server.request(path);
      expect(response.status).toBe(404);
      expect((await json(response)).error).toContain("No route");
      expect(securityHeadersOf(response)).toEqual(SECURITY_HEADERS);
    }
  });

  it("answers CORS preflight with 204, CORS and security headers and no key", async () => {
    const response = await server.request("/api/agents", {
      method: "OPTIONS",
      key: null,
      headers: { origin: "https://example.com", "access-control-request-method": "POST" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toContain("DELETE");
    expect(response.headers.get("access-control-allow-headers")).toContain("*");
    expect(securityHeadersOf(response)).toEqual(SECURITY_HEADERS);
  });

  it("merges path params, query and body into one payload, path params winning", async () => {
    const response = await server.request("/api/test/echo/abc?q=1", {
      method: "POST",
      json: { name: "n", id: "x" },
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ input: { id: "abc", q: "1", name: "n" }, auth: "admin" });
  });

  it("maps create routes to 201 and empty results to 204", async () => {
    expect((await server.request("/api/test/things", { method: "POST", json: {} })).status).toBe(201);
    const deleted = await server.request("/api/test/things/1", { method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
  });

  it("answers malformed JSON with 400", async () => {
    const response = await server.request("/api/test/echo/a", {
      method: "POST",
      body: '{"name": ',
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatch(/Malformed JSON/);
  });

  it("says to send Content-Type: application/json when a JSON body comes as a form (curl -d)", async () => {
    const response = await server.request("/api/test/echo/a", {
      method: "POST",
      body: '{"name":"noct"}',
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain("send the header Content-Type: application/json");
  });

  it("answers a body over 1 MiB with 413", async () => {
    const response = await server.request("/api/test/echo/a", {
      method: "POST",
      json: { name: "x".repeat(1024 * 1024 + 10) },
    });
    expect(response.status).toBe(413);
    expect(securityHeadersOf(response)).toEqual(SECURITY_HEADERS);
  });

  it("answers invalid input with 400 naming the field", async () => {
    const response = await server.request("/api/test/echo/a", { method: "POST", json: { name: 5 } });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatch(/^name: /);
    const unknown = await server.request("/api/test/echo/a", { method: "POST", json: { nmae: "x" } });
    expect(unknown.status).toBe(400);
    expect((await json(unknown)).error).toContain("nmae");
  });

  it("refuses JSON nested deeper than the limit with 400", async () => {
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const response = await server.request("/api/test/echo/a", {
      method: "POST",
      body: deep,
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(400);
  });

  it("maps a conflict to 409 and an unexpected failure to 500 without details", async () => {
    const stale = await server.request("/api/test/conflict");
    expect(stale.status).toBe(409);
    expect(await json(stale)).toEqual({ error: "stale version" });
    const crash = await server.request("/api/test/crash");
    expect(crash.status).toBe(500);
    expect(await json(crash)).toEqual({ error: "Internal server error" });
  });

  it("serves routes registered after the server started listening", async () => {
    const worker = server.service.engine.worker("late");
    worker.registerFunction({ id: "late::hello" }, () => ({ hello: "world" }));
    worker.registerTrigger({ type: "http", function_id: "late::hello", config: { api_path: "/api/late" } });
    const response = await server.request("/api/late");
    expect(await json(response)).toEqual({ hello: "world" });
  });

  it("carries an X-Request-Id on every response", async () => {
    const response = await server.request("/api/health");
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers a malformed percent-encoding in the path with 400 JSON and the security headers", async () => {
    const { port } = new URL(server.url);
    const answer = await new Promise<{ status?: number; headers: Record<string, unknown>; body: string }>(
      (resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path: "/api/keys/%zz" }, (res) => {
          let body = "";
          res.on("data", (chunk) => (body += chunk));
          res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
        });
        req.on("error", reject);
        req.end();
      },
    );
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error).toBe("Malformed URL");
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(answer.headers[name]).toBe(value);
  });

  it("answers bytes that are not HTTP with 400 and the security headers, then closes", async () => {
    const { port } = new URL(server.url);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => socket.write("NOT HTTP AT ALL\r\n\r\n"));
      let text = "";
      socket.on("data", (chunk) => (text += chunk));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    for (const [name, value] of Object.entries(SECURITY_HEADERS))
      expect(reply.toLowerCase()).toContain(`${name}: ${value.toLowerCase()}`);
  });
});
