import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { systemPrincipal } from "../../src/engine/types.ts";
import { assertRealmAccess, requireAdmin } from "../../src/shared/access.ts";
import { json, startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

/** A raw request, so the path reaches the server exactly as written (fetch would normalise it). */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const { port } = new URL(server.url);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path, headers }, (res) => {
      let text = "";
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

beforeAll(async () => {
  server = await startTestServer();
  const worker = server.service.engine.worker("probe");
  const realmInput = z.strictObject({ realmId: z.string() });
  worker.registerFunction({ id: "probe::inner", input: realmInput }, (input, ctx) => {
    assertRealmAccess(ctx, input.realmId);
    return { caller: ctx.auth.kind };
  });
  worker.registerFunction({ id: "probe::outer", input: realmInput }, (input) =>
    worker.trigger({ function_id: "probe::inner", payload: input }),
  );
  worker.registerFunction({ id: "probe::elevated", input: realmInput }, (input) =>
    worker.trigger({ function_id: "probe::inner", payload: input, auth: systemPrincipal }),
  );
  worker.registerFunction({ id: "probe::admin_only" }, (_input, ctx) => {
    requireAdmin(ctx);
    return { ok: true };
  });
  for (const id of ["outer", "elevated"]) {
    worker.registerTrigger({
      type: "http",
      function_id: `probe::${id}`,
      config: { api_path: `/api/probe/${id}/:realmId` },
    });
  }
  worker.registerTrigger({
    type: "http",
    function_id: "probe::admin_only",
    config: { api_path: "/open/admin" },
  });
});

afterAll(() => server.close());

describe("the key check cannot be sidestepped", () => {
  it.each([
    ["GET", "//api/keys"],
    ["GET", "///api/keys"],
    ["POST", "//api/keys"],
    ["GET", "/%61pi/keys"],
    ["GET", "/api//keys"],
    ["GET", "http://example.com/api/keys"],
    ["HEAD", "//api/keys"],
  ])("refuses %s %s without a key", async (method, path) => {
    const response = await raw(
      method,
      path,
      { "content-type": "application/json" },
      method === "POST" ? "{}" : undefined,
    );
    expect(response.status).toBe(401);
  });

  it("runs functions behind unprotected routes as anonymous, which admin-only functions refuse", async () => {
    const response = await server.request("/open/admin", { key: null });
    expect(response.status).toBe(401);
  });

  it("checks the key before reading the body", async () => {
    const response = await raw("POST", "/api/keys", { "content-type": "application/json" }, '{"broken":');
    expect(response.status).toBe(401);
  });

  it("counts malformed bodies against the rate limit", async () => {
    const limited = await startTestServer({
      rateLimits: { read: 1000, write: 3, message: 60, workflow_run: 100 },
      rateLimitAdmin: true,
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const response = await limited.request("/api/keys", {
          method: "POST",
          body: '{"broken":',
          headers: { "content-type": "application/json" },
        });
        statuses.push(response.status);
      }
      expect(statuses).toEqual([400, 400, 400, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe("the caller's principal follows nested calls", () => {
  async function realmKey(realmId: string): Promise<string> {
    const created = (await server.service.engine.trigger({
      function_id: "auth::keys::create",
      payload: { realmId },
    })) as { key: string };
    return created.key;
  }

  it("refuses a realm-bound key that reaches another realm through a function calling a function", async () => {
    const key = await realmKey("realm-default");
    expect(await json(await server.request("/api/probe/outer/realm-default", { key }))).toEqual({
      caller: "realm",
    });
    const other = await server.request("/api/probe/outer/realm-b", { key });
    expect(other.status).toBe(404);
  });

  it("lets a function elevate to the system on purpose", async () => {
    const key = await realmKey("realm-default");
    const response = await server.request("/api/probe/elevated/realm-b", { key });
    expect(await json(response)).toEqual({ caller: "system" });
  });
});
