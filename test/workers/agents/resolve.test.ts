import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const chat = (model: string, key?: string) =>
  call(server, "POST", "/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] }, key);

describe("agents named as /v1 models", () => {
  it("finds an agent by name through the index, only within the key's realm, and forgets it on delete", async () => {
    const realmA = await newRealm(server, "A");
    const realmB = await newRealm(server, "B");
    const agentId = await createAgent(server, realmA, { name: "helper one" });
    const resolve = (model: string, auth?: { kind: "realm"; keyId: string; realmId: string }) =>
      server.service.engine.trigger({
        function_id: "agent::resolve",
        payload: { model },
        ...(auth ? { auth } : {}),
      });
    expect(await resolve("helper one")).toEqual({ agentId });
    expect(await resolve(agentId)).toEqual({ agentId });
    await expect(resolve("helper one", { kind: "realm", keyId: "k", realmId: realmB })).rejects.toThrow(
      /No agent/,
    );
    expect(await resolve("helper one", { kind: "realm", keyId: "k", realmId: realmA })).toEqual({ agentId });
    await expect(resolve("helper")).rejects.toThrow(/No agent/);

    const keyB = await realmKey(server, realmB);
    const fromB = await chat("helper one", keyB);
    expect(fromB.status).toBe(404);
    expect(fromB.body.error.code).toBe("model_not_found");

    expect((await call(server, "DELETE", `/api/agents/${agentId}`)).status).toBe(204);
    await expect(resolve("helper one")).rejects.toThrow(/No agent/);
  });

  it("sends an admin key's name to the default realm's agent, never to an older one a tenant named alike", async () => {
    const tenant = await newRealm(server, "tenant");
    const tenantKey = await realmKey(server, tenant);
    const squatted = await call(
      server,
      "POST",
      "/api/agents",
      { name: "support", model: "gpt-4o" },
      tenantKey,
    );
    expect(squatted.status).toBe(201);
    const own = await createAgent(server, "realm-default", { name: "support" });
    const resolved = await server.service.engine.trigger({
      function_id: "agent::resolve",
      payload: { model: "support" },
    });
    expect(resolved).toEqual({ agentId: own });
    // The tenant's key still finds its own agent by that name.
    const asTenant = await server.service.engine.trigger({
      function_id: "agent::resolve",
      payload: { model: "support" },
      auth: { kind: "realm", keyId: "k", realmId: tenant },
    });
    expect(asTenant).toEqual({ agentId: squatted.body.id });
  });

  it("refuses an admin key's name that agents of several other realms share (409), naming them", async () => {
    const first = await createAgent(server, await newRealm(server, "one"), { name: "twin" });
    const second = await createAgent(server, await newRealm(server, "two"), { name: "twin" });
    const answer = await chat("twin");
    expect(answer.status).toBe(409);
    expect(JSON.stringify(answer.body)).toContain(`agent:${first}`);
    expect(JSON.stringify(answer.body)).toContain(`agent:${second}`);
    const only = await createAgent(server, await newRealm(server, "three"), { name: "single" });
    await expect(
      server.service.engine.trigger({ function_id: "agent::resolve", payload: { model: "single" } }),
    ).resolves.toEqual({ agentId: only });
  });
});
