import { describe, expect, it } from "vitest";
import { call, realmKey } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { json } from "../../helpers/server.ts";

const env = serverWithFakeModel();

describe("POST /api/providers/:provider/test", () => {
  it("makes a one-token request and reports the latency and the model used", async () => {
    const result = await json(await env.server.request("/api/providers/openai/test", { method: "POST" }));
    expect(result).toMatchObject({ provider: "openai", ok: true, model: expect.any(String) });
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(env.fake.requests).toHaveLength(1);
    expect(env.fake.requests[0]).toMatchObject({ max_tokens: 1 });
  });

  it("reports a provider without a key as not ok, saying how to configure it", async () => {
    const result = await json(await env.server.request("/api/providers/anthropic/test", { method: "POST" }));
    expect(result).toMatchObject({ provider: "anthropic", ok: false });
    expect(result.error).toContain("ANTHROPIC_API_KEY");
  });

  it("is the operator's: a realm key gets 403 and no request is made", async () => {
    const realm = await call(env.server, "POST", "/api/realms", { name: "tenant", owner: "t" });
    const key = await realmKey(env.server, realm.body.id);
    const before = env.fake.requests.length;
    const response = await env.server.request("/api/providers/openai/test", { method: "POST", key });
    expect(response.status).toBe(403);
    expect(env.fake.requests).toHaveLength(before);
  });

  it("answers 404 for a provider the catalog does not know", async () => {
    expect((await env.server.request("/api/providers/nobody/test", { method: "POST" })).status).toBe(404);
  });
});
