import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgent, createRealm, markRealmDeleting } from "../../helpers/control-plane.ts";
import { json, startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(() => server.close());

const boundTo = async (realmId: string) =>
  (await json(await server.request("/api/keys"))).keys.filter(
    (key: { realmId?: string }) => key.realmId === realmId,
  );

describe("auth::keys::create and realm deletes", () => {
  it("refuses a key for a realm being deleted (409) and stores none", async () => {
    const realmId = (await createRealm(server)).id;
    await markRealmDeleting(server, realmId);
    const response = await server.request("/api/keys", { method: "POST", json: { realmId } });
    expect(response.status).toBe(409);
    expect((await json(response)).error).toBe(`Realm ${realmId} is being deleted`);
    expect(await boundTo(realmId)).toEqual([]);
  });

  it("leaves no key minted while the realm was deleted: none outlives its realm", async () => {
    const realmId = (await createRealm(server)).id;
    // A few agents, so the delete's purges take long enough for keys to be minted during them.
    for (let i = 0; i < 3; i++) await createAgent(server, realmId);
    let deleted = false;
    const deleting = server.request(`/api/realms/${realmId}`, { method: "DELETE" }).then((response) => {
      deleted = true;
      return response.status;
    });
    const minted: string[] = [];
    while (!deleted) {
      const response = await server.request("/api/keys", { method: "POST", json: { realmId } });
      expect([201, 404, 409]).toContain(response.status);
      if (response.status === 201) minted.push((await json(response)).key);
    }
    expect(await deleting).toBe(200);
    expect(await boundTo(realmId)).toEqual([]);
    for (const key of minted) expect((await server.request("/api/whoami", { key })).status).toBe(401);
  });
});
