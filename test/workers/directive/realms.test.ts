import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { archiveRealm, call, markRealmDeleting, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";
import { createDirective } from "./fixtures.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const create = (body: Record<string, unknown>, key?: string) => createDirective(server, body, key);

describe("directive realm isolation and purge", () => {
  it("lets a realm-bound key use its own realm and finds nothing on any route of another (404)", async () => {
    const mine = await newRealm(server);
    const theirs = await newRealm(server);
    const key = await realmKey(server, mine);
    const own = await create({ realmId: mine, title: "Mine", level: "realm" }, key);
    expect((await call(server, "GET", `/api/directives/${mine}/${own.id}`, undefined, key)).status).toBe(200);
    const foreign = await create({ realmId: theirs, title: "Theirs", level: "realm" });
    const attempts: Array<[string, string, unknown?]> = [
      ["POST", "/api/directives", { realmId: theirs, title: "Sneaky", level: "realm" }],
      ["GET", `/api/directives/${theirs}`],
      ["GET", `/api/directives/${theirs}/${foreign.id}`],
      ["PATCH", `/api/directives/${theirs}/${foreign.id}`, { title: "Hijacked" }],
      ["GET", `/api/directives/${theirs}/${foreign.id}/ancestry`],
    ];
    for (const [method, path, body] of attempts) {
      const response = await call(server, method, path, body, key);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error).toContain(`Realm ${theirs} not found`);
    }
    const untouched = await call(server, "GET", `/api/directives/${theirs}/${foreign.id}`);
    expect(untouched.body.title).toBe("Theirs");
  });

  it("purges every directive of one realm, idempotently, and leaves other realms alone", async () => {
    const realmId = await newRealm(server);
    const other = await newRealm(server);
    const root = await create({ realmId, title: "Root", level: "realm" });
    await create({ realmId, title: "Child", level: "team", parentId: root.id });
    const kept = await create({ realmId: other, title: "Kept", level: "realm" });
    const purge = () =>
      server.service.engine.trigger({ function_id: "directive::purge_realm", payload: { realmId } });
    expect(await purge()).toEqual({ purged: 2 });
    expect(await purge()).toEqual({ purged: 0 });
    const listed = await call(server, "GET", `/api/directives/${realmId}`);
    expect(listed.body).toEqual({ directives: [], count: 0, nextCursor: null });
    expect((await call(server, "GET", `/api/directives/${other}/${kept.id}`)).status).toBe(200);
  });

  it("has no HTTP route for purge_realm", async () => {
    const response = await call(server, "POST", "/api/directives/purge_realm", { realmId: "x" });
    expect(response.status).toBe(404);
  });
});

describe("directive realm checks (with the realm worker)", () => {
  it("answers 404 for an unknown realm and 409 for writes to an archived one", async () => {
    const unknown = "realm-does-not-exist";
    expect((await call(server, "GET", `/api/directives/${unknown}`)).status).toBe(404);
    const created = await call(server, "POST", "/api/directives", {
      realmId: unknown,
      title: "x",
      level: "realm",
    });
    expect(created.status).toBe(404);

    const realmId = await newRealm(server);
    const directive = await create({ realmId, title: "Before archive", level: "realm" });
    await archiveRealm(server, realmId);
    const refused = [
      await call(server, "POST", "/api/directives", { realmId, title: "After", level: "realm" }),
      await call(server, "PATCH", `/api/directives/${realmId}/${directive.id}`, { title: "After" }),
    ];
    for (const response of refused) {
      expect(response).toEqual({
        status: 409,
        body: { error: `Realm ${realmId} is archived and read-only` },
      });
    }
    expect((await call(server, "GET", `/api/directives/${realmId}/${directive.id}`)).status).toBe(200);
  });

  it("refuses creates and updates (409) in a realm being deleted", async () => {
    const realmId = await newRealm(server);
    const directive = await create({ realmId, title: "Before delete", level: "realm" });
    await markRealmDeleting(server, realmId);
    for (const response of [
      await call(server, "POST", "/api/directives", { realmId, title: "After", level: "realm" }),
      await call(server, "PATCH", `/api/directives/${realmId}/${directive.id}`, { title: "After" }),
    ]) {
      expect(response).toEqual({ status: 409, body: { error: `Realm ${realmId} is being deleted` } });
    }
    expect((await call(server, "GET", `/api/directives/${realmId}`)).body.count).toBe(1);
  });
});

describe("directive::purge_realm", () => {
  it("is an internal cascade step: a realm-bound caller gets 403, even for its own realm", async () => {
    const realmId = await newRealm(server);
    await create({ realmId, title: "Kept", level: "realm" });
    await expect(
      server.service.engine.trigger({
        function_id: "directive::purge_realm",
        payload: { realmId },
        auth: { kind: "realm", realmId, keyId: "k" },
      }),
    ).rejects.toMatchObject({ status: 403 });
    expect((await call(server, "GET", `/api/directives/${realmId}`)).body.count).toBe(1);
  });
});
