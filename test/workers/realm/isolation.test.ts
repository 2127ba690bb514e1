import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, createRealm, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.close();
});

describe("a realm-bound key", () => {
  it("sees, updates and exports only its own realm", async () => {
    const mine = await createRealm(server, { name: "Mine" });
    const theirs = await createRealm(server, { name: "Theirs" });
    const key = await realmKey(server, mine.id);

    expect((await call(server, "GET", "/api/realms", undefined, key)).body).toEqual([mine]);
    expect((await call(server, "GET", `/api/realms/${mine.id}`, undefined, key)).status).toBe(200);
    const renamed = await call(server, "PATCH", `/api/realms/${mine.id}`, { name: "Mine 2" }, key);
    expect(renamed.body.name).toBe("Mine 2");
    const exported = await call(server, "POST", `/api/realms/${mine.id}/export`, {}, key);
    expect(exported.status).toBe(200);
    expect(exported.body.realm.id).toBe(mine.id);

    for (const [method, path, body] of [
      ["GET", `/api/realms/${theirs.id}`, undefined],
      ["PATCH", `/api/realms/${theirs.id}`, { name: "x" }],
      ["POST", `/api/realms/${theirs.id}/export`, {}],
      ["GET", "/api/realms/realm-nope", undefined],
    ] as const) {
      // Another realm and one that does not exist read alike: existence is not revealed.
      const response = await call(server, method, path, body, key);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error).toContain(`sees only realm ${mine.id}`);
    }
  });

  it("may not create, import or delete realms, change its quota or status, or export secrets", async () => {
    const mine = await createRealm(server);
    const key = await realmKey(server, mine.id);
    const exported = (await call(server, "POST", `/api/realms/${mine.id}/export`, {})).body;
    for (const [method, path, body] of [
      ["POST", "/api/realms", { name: "n", owner: "o" }],
      ["POST", "/api/realms/import", { data: exported }],
      ["DELETE", `/api/realms/${mine.id}`, undefined],
      ["PATCH", `/api/realms/${mine.id}`, { maxAgents: 100 }],
      ["PATCH", `/api/realms/${mine.id}`, { status: "Paused" }],
      ["PATCH", `/api/realms/${mine.id}`, { status: "Archived" }],
      ["PATCH", `/api/realms/${mine.id}`, { status: "Active" }],
      ["PATCH", `/api/realms/${mine.id}`, { name: "Renamed", status: "Paused" }],
      ["POST", `/api/realms/${mine.id}/export`, { scrubSecrets: false }],
    ] as const) {
      expect((await call(server, method, path, body, key)).status, `${method} ${path}`).toBe(403);
    }
    expect((await call(server, "GET", `/api/realms/${mine.id}`)).body).toEqual(mine);
    expect((await call(server, "GET", "/api/realms")).body).toHaveLength(2);
  });

  it("cannot resume a realm the operator paused (the status is the operator's control)", async () => {
    const mine = await createRealm(server);
    const key = await realmKey(server, mine.id);
    expect((await call(server, "PATCH", `/api/realms/${mine.id}`, { status: "Paused" })).status).toBe(200);
    expect(await call(server, "PATCH", `/api/realms/${mine.id}`, { status: "Active" }, key)).toEqual({
      status: 403,
      body: { error: "A realm's status can only be changed with an admin key" },
    });
    expect((await call(server, "GET", `/api/realms/${mine.id}`, undefined, key)).body.status).toBe("Paused");
    // Its other settings stay the key's to change, paused or not.
    const renamed = await call(server, "PATCH", `/api/realms/${mine.id}`, { description: "on hold" }, key);
    expect(renamed.body).toMatchObject({ status: "Paused", description: "on hold" });
  });

  it("without any key every realm route is 401", async () => {
    const response = await server.request("/api/realms", { key: null });
    expect(response.status).toBe(401);
  });
});

describe("agents of a realm-bound key", () => {
  it("lists agents of its own realm only; asking for another realm's is 404", async () => {
    const mine = await createRealm(server);
    const theirs = await createRealm(server);
    const key = await realmKey(server, mine.id);
    const own = await call(server, "POST", "/api/agents", { name: "own", model: "gpt-4o" }, key);
    expect(own.status).toBe(201);
    await call(server, "POST", "/api/agents", { name: "other", model: "gpt-4o", realmId: theirs.id });
    const listed = await call(server, "GET", "/api/agents", undefined, key);
    expect(listed.body.agents.map((a: { id: string }) => a.id)).toEqual([own.body.id]);
    const filtered = await call(server, "GET", `/api/agents?realmId=${mine.id}`, undefined, key);
    expect(filtered.body.agents).toHaveLength(1);
    expect((await call(server, "GET", `/api/agents?realmId=${theirs.id}`, undefined, key)).status).toBe(404);
    const adminView = await call(server, "GET", `/api/agents?realmId=${theirs.id}`);
    expect(adminView.body.agents.map((a: { name: string }) => a.name)).toEqual(["other"]);
    const create = await call(server, "POST", "/api/agents", { name: "x", realmId: theirs.id }, key);
    expect(create.status).toBe(404);
  });
});
