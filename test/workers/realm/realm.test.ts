import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, createAgent, createRealm, recordTopic } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.close();
});

describe("the default realm", () => {
  it("exists from the start and can be neither deleted nor archived", async () => {
    expect((await call(server, "GET", "/api/realms/realm-default")).body).toMatchObject({
      id: "realm-default",
      name: "Default",
      owner: "system",
      status: "Active",
    });
    expect(await call(server, "DELETE", "/api/realms/realm-default")).toEqual({
      status: 409,
      body: { error: "Realm realm-default cannot be deleted" },
    });
    const archive = await call(server, "PATCH", "/api/realms/realm-default", { status: "Archived" });
    expect(archive.status).toBe(409);
    expect(archive.body.error).toContain("Realm realm-default cannot be archived");
  });
});

describe("realm CRUD", () => {
  it("creates a realm (201) with every field, reads it back and lists realms oldest first", async () => {
    const realm = await createRealm(server, {
      name: "  Acme  ",
      description: "the Acme tenant",
      defaultModel: "gpt-4o",
      maxAgents: 5,
      metadata: { plan: "pro" },
    });
    expect(realm).toEqual({
      id: expect.stringMatching(/^realm-[0-9a-f-]{36}$/),
      name: "Acme",
      owner: "ops@acme.test",
      description: "the Acme tenant",
      status: "Active",
      defaultModel: "gpt-4o",
      maxAgents: 5,
      metadata: { plan: "pro" },
      createdAt: expect.any(String),
      updatedAt: realm.createdAt,
    });
    expect((await call(server, "GET", `/api/realms/${realm.id}`)).body).toEqual(realm);
    const second = await createRealm(server, { name: "Beta" });
    const listed = await call(server, "GET", "/api/realms");
    expect(listed.status).toBe(200);
    expect(listed.body.map((r: { id: string }) => r.id)).toEqual(["realm-default", realm.id, second.id]);
  });

  it.each([
    [{ owner: "o" }, "name"],
    [{ name: "n" }, "owner"],
    [{ name: " ", owner: "o" }, "name is required"],
    [{ name: "n", owner: "o".repeat(201) }, "owner must be at most 200"],
    [{ name: "n", owner: "o", maxAgents: -1 }, "maxAgents must be at least 0"],
    [{ name: "n", owner: "o", maxAgents: 1.5 }, "maxAgents must be an integer"],
    [{ name: "n", owner: "o", metadata: [1] }, "metadata"],
    [{ name: "n", owner: "o", defaultModel: "gpt-9000" }, "defaultModel"],
    [{ name: "n", owner: "o", status: "Paused" }, "status"],
  ])("refuses to create %j with 400 naming %s", async (body, text) => {
    const response = await call(server, "POST", "/api/realms", body);
    expect(response.status).toBe(400);
    expect(response.body.error).toContain(text);
  });

  it("answers 404 naming the realm for get, update, delete and export of an unknown realm", async () => {
    for (const [method, path, body] of [
      ["GET", "/api/realms/realm-nope", undefined],
      ["PATCH", "/api/realms/realm-nope", { name: "x" }],
      ["DELETE", "/api/realms/realm-nope", undefined],
      ["POST", "/api/realms/realm-nope/export", {}],
    ] as const) {
      expect(await call(server, method, path, body), `${method} ${path}`).toEqual({
        status: 404,
        body: { error: "Realm realm-nope not found" },
      });
    }
  });

  it("updates fields, clears optional ones with null and refuses an empty update", async () => {
    const realm = await createRealm(server, { description: "d", maxAgents: 2, metadata: { a: 1 } });
    const updated = await call(server, "PATCH", `/api/realms/${realm.id}`, {
      name: "Acme 2",
      description: null,
      maxAgents: null,
      metadata: { b: 2 },
      defaultModel: "sonnet",
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: "Acme 2", metadata: { b: 2 }, defaultModel: "sonnet" });
    expect(updated.body).not.toHaveProperty("description");
    expect(updated.body).not.toHaveProperty("maxAgents");
    expect(updated.body.updatedAt >= realm.updatedAt).toBe(true);
    const empty = await call(server, "PATCH", `/api/realms/${realm.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toContain("Nothing to update");
    const badModel = await call(server, "PATCH", `/api/realms/${realm.id}`, { defaultModel: "gpt-9000" });
    expect(badModel.status).toBe(400);
  });

  it("deletes a realm with its agents: {deleted: true}, then 404", async () => {
    const realm = await createRealm(server);
    const agent = await createAgent(server, realm.id, { name: "a" });
    expect(await call(server, "DELETE", `/api/realms/${realm.id}`)).toEqual({
      status: 200,
      body: { deleted: true },
    });
    expect((await call(server, "GET", `/api/realms/${realm.id}`)).status).toBe(404);
    expect((await call(server, "GET", `/api/agents/${agent}`)).status).toBe(404);
    expect((await call(server, "DELETE", `/api/realms/${realm.id}`)).status).toBe(404);
  });
});

describe("realm status", () => {
  it.each([
    ["Active", "Paused"],
    ["Paused", "Active"],
    ["Active", "Archived"],
    ["Paused", "Archived"],
    ["Active", "Active"],
  ])("moves from %s to %s", async (from, to) => {
    const realm = await createRealm(server);
    if (from === "Paused") await call(server, "PATCH", `/api/realms/${realm.id}`, { status: "Paused" });
    const moved = await call(server, "PATCH", `/api/realms/${realm.id}`, { status: to });
    expect(moved.status).toBe(200);
    expect(moved.body.status).toBe(to);
  });

  it.each([
    { status: "Active" },
    { status: "Paused" },
    { status: "Archived" },
    { name: "renamed" },
    { maxAgents: 3 },
  ])("keeps an archived realm read-only: %j is refused with 409", async (patch) => {
    const realm = await createRealm(server);
    await call(server, "PATCH", `/api/realms/${realm.id}`, { status: "Archived" });
    expect(await call(server, "PATCH", `/api/realms/${realm.id}`, patch)).toEqual({
      status: 409,
      body: { error: `Realm ${realm.id} is archived and read-only` },
    });
    expect((await call(server, "GET", `/api/realms/${realm.id}`)).body).toMatchObject({
      status: "Archived",
      name: "Acme",
    });
  });

  it("refuses an unknown status with 400", async () => {
    const realm = await createRealm(server);
    const response = await call(server, "PATCH", `/api/realms/${realm.id}`, { status: "Suspended" });
    expect(response.status).toBe(400);
    expect(response.body.error).toContain("status");
  });

  it("refuses new agents and agent deletes in an archived realm, and agents in an unknown one", async () => {
    const realm = await createRealm(server);
    const agent = await createAgent(server, realm.id, { name: "kept" });
    await call(server, "PATCH", `/api/realms/${realm.id}`, { status: "Archived" });
    expect(await call(server, "POST", "/api/agents", { name: "late", realmId: realm.id })).toEqual({
      status: 409,
      body: { error: `Realm ${realm.id} is archived and read-only` },
    });
    expect((await call(server, "DELETE", `/api/agents/${agent}`)).status).toBe(409);
    expect((await call(server, "GET", `/api/agents/${agent}`)).status).toBe(200);
    expect(await call(server, "POST", "/api/agents", { name: "lost", realmId: "realm-nope" })).toEqual({
      status: 404,
      body: { error: "Realm realm-nope not found" },
    });
  });
});

describe("realm.lifecycle events", () => {
  it("publishes created, updated (with from/to when the status moved) and deleted", async () => {
    const events = recordTopic(server, "realm.lifecycle");
    const realm = await createRealm(server);
    await call(server, "PATCH", `/api/realms/${realm.id}`, { name: "renamed" });
    await call(server, "PATCH", `/api/realms/${realm.id}`, { status: "Paused" });
    await call(server, "DELETE", `/api/realms/${realm.id}`);
    await expect.poll(() => events.length).toBe(4);
    expect(events).toEqual([
      { type: "created", realmId: realm.id },
      { type: "updated", realmId: realm.id },
      { type: "updated", realmId: realm.id, from: "Active", to: "Paused" },
      { type: "deleted", realmId: realm.id },
    ]);
  });
});

describe("maxAgents", () => {
  it("lets exactly maxAgents of many concurrent creates through; a delete frees a slot", async () => {
    const realm = await createRealm(server, { maxAgents: 3 });
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(server, "POST", "/api/agents", { name: `a${i}`, model: "gpt-4o", realmId: realm.id }),
      ),
    );
    const created = responses.filter((r) => r.status === 201);
    expect(created).toHaveLength(3);
    for (const refused of responses.filter((r) => r.status !== 201)) {
      expect(refused).toEqual({
        status: 409,
        body: { error: `Realm ${realm.id} has reached its limit of 3 agents` },
      });
    }
    const listed = await call(server, "GET", `/api/agents?realmId=${realm.id}`);
    expect(listed.body.agents).toHaveLength(3);
    await call(server, "DELETE", `/api/agents/${created[0]?.body.id}`);
    await createAgent(server, realm.id, { name: "replacement" });
    expect((await call(server, "POST", "/api/agents", { name: "x", realmId: realm.id })).status).toBe(409);
  });

  it("applies a raised, lowered or cleared limit to the next create", async () => {
    const realm = await createRealm(server, { maxAgents: 0 });
    expect((await call(server, "POST", "/api/agents", { name: "x", realmId: realm.id })).status).toBe(409);
    await call(server, "PATCH", `/api/realms/${realm.id}`, { maxAgents: 1 });
    await createAgent(server, realm.id, { name: "one" });
    expect((await call(server, "POST", "/api/agents", { name: "x", realmId: realm.id })).status).toBe(409);
    await call(server, "PATCH", `/api/realms/${realm.id}`, { maxAgents: null });
    await createAgent(server, realm.id, { name: "two" });
  });
});
