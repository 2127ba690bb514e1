import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { assertRealmAccess } from "../../src/shared/access.ts";
import { json, startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  const worker = server.service.engine.worker("test");
  worker.registerFunction(
    { id: "test::realm_read", input: z.strictObject({ realmId: z.string() }) },
    (input, ctx) => {
      assertRealmAccess(ctx, input.realmId);
      return { realmId: input.realmId };
    },
  );
  worker.registerTrigger({
    type: "http",
    function_id: "test::realm_read",
    config: { api_path: "/api/test/realms/:realmId" },
  });
});

afterAll(() => server.close());

async function createKey(body: Record<string, unknown>) {
  const response = await server.request("/api/keys", { method: "POST", json: body });
  expect(response.status).toBe(201);
  return (await json(response)) as { id: string; key: string; role: string; realmId?: string };
}

describe("API keys", () => {
  it("creates an admin key that works at once and is shown only in the create reply", async () => {
    const created = await createKey({ name: "ci" });
    expect(created.key).toMatch(/^aos_/);
    expect(created.role).toBe("admin");
    expect((await server.request("/api/health", { key: created.key })).status).toBe(200);
    const listed = await json(await server.request("/api/keys"));
    const entry = listed.keys.find((key: { id: string }) => key.id === created.id);
    expect(entry).toMatchObject({ name: "ci", role: "admin" });
    expect(JSON.stringify(listed)).not.toContain(created.key);
    expect(JSON.stringify(listed)).not.toContain('"hash"');
  });

  it("lets a realm-bound key reach its own realm; another realm reads as missing (404)", async () => {
    const realmKey = await createKey({ realmId: "realm-default" });
    expect(realmKey.role).toBe("realm");
    const own = await server.request("/api/test/realms/realm-default", { key: realmKey.key });
    expect(own.status).toBe(200);
    const other = await server.request("/api/test/realms/realm-b", { key: realmKey.key });
    expect(other.status).toBe(404);
    expect((await json(other)).error).toBe(
      "Realm realm-b not found (this API key sees only realm realm-default)",
    );
  });

  it("refuses key management to realm-bound keys", async () => {
    const realmKey = await createKey({ realmId: "realm-default" });
    const response = await server.request("/api/keys", { method: "POST", json: {}, key: realmKey.key });
    expect(response.status).toBe(403);
  });

  it("stops accepting a revoked key, also one the server has just verified", async () => {
    const created = await createKey({ name: "temporary" });
    expect((await server.request("/api/health", { key: created.key })).status).toBe(200);
    const revoked = await server.request(`/api/keys/${created.id}`, { method: "DELETE" });
    expect(revoked.status).toBe(204);
    expect((await server.request("/api/health", { key: created.key })).status).toBe(401);
    expect((await server.request(`/api/keys/${created.id}`, { method: "DELETE" })).status).toBe(404);
  });

  it("stores keys only as SHA-256 hashes", async () => {
    const created = await createKey({ name: "hashed" });
    const page = (await server.service.engine.trigger({
      function_id: "state::list",
      payload: { scope: "api_keys" },
    })) as { items: Array<{ key: string; value: unknown }> };
    expect(JSON.stringify(page)).not.toContain(created.key);
    expect(page.items.every((item) => /^[0-9a-f]{64}$/.test(item.key))).toBe(true);
  });
});

describe("metrics and OpenAPI", () => {
  it("exports request durations by route template and function errors to admin keys only", async () => {
    await server.request("/api/test/realms/realm-x");
    await server.request("/api/keys/key_0000000000000000", { method: "DELETE" });
    const response = await server.request("/metrics");
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain(
      'api_request_duration_ms_bucket{le="1",method="GET",route="/api/test/realms/:realmId"',
    );
    expect(text).toMatch(/api_requests_total\{method="GET",path="\/api\/health",status="200"\}/);
    expect(text).toContain('function_error_total{function="auth::keys::revoke",code="not_found"}');
    expect(text).not.toContain("realm-x");
    expect((await server.request("/metrics", { key: null })).status).toBe(401);
    const realmKey = await createKey({ realmId: "realm-default" });
    expect((await server.request("/metrics", { key: realmKey.key })).status).toBe(403);
  });

  it("describes every route in /api/openapi.json", async () => {
    const response = await server.request("/api/openapi.json");
    const document = await json(response);
    expect(document.openapi).toBe("3.1.0");
    expect(document.paths["/api/health"].get.operationId).toBe("api::health");
    expect(document.paths["/api/keys"].post.requestBody).toBeDefined();
    expect(document.paths["/api/keys/{id}"].delete.parameters[0]).toMatchObject({ name: "id", in: "path" });
  });
});
