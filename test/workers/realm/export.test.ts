import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_EXPORT_BYTES } from "../../../src/workers/realm/export.ts";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.close();
});

describe("realm export of a large realm", () => {
  it("refuses with 413, instead of building the whole document in memory, past the export bound", async () => {
    // A realm's data has no size limit: a realm key can add 10 kB directives without end, and one
    // export used to hold them all (a realm of 150 MB took a 256 MB service down with one request).
    const realmId = await newRealm(server);
    const key = await realmKey(server, realmId);
    const description = "x".repeat(10_000);
    const count = Math.ceil(MAX_EXPORT_BYTES / description.length) + 50;
    let next = 0;
    const create = async () => {
      while (next < count) {
        const title = `goal ${next++}`;
        const created = await call(
          server,
          "POST",
          "/api/directives",
          { realmId, title, level: "team", description },
          key,
        );
        expect(created.status).toBe(201);
      }
    };
    await Promise.all(Array.from({ length: 8 }, create));

    const refused = await call(server, "POST", `/api/realms/${realmId}/export`, {}, key);
    expect(refused.status).toBe(413);
    expect(refused.body.error).toBe(`Realm ${realmId} is too large to export in one document (over 32 MiB)`);
    // The service goes on serving every realm.
    expect((await call(server, "GET", `/api/realms/${realmId}`, undefined, key)).status).toBe(200);
  });
});

describe("realm export of a realm being deleted", () => {
  it("refuses (409) a realm whose delete is pending, half purged, instead of a document that lacks data", async () => {
    const realmId = await newRealm(server);
    const key = await realmKey(server, realmId);
    await createAgent(server, realmId);
    const directive = await call(server, "POST", "/api/directives", {
      realmId,
      title: "Grow",
      level: "realm",
    });
    expect(directive.status).toBe(201);
    // The delete purges the directives, then fails at a later worker: the realm stays, half purged.
    server.service.engine.worker("flaky").registerFunction({ id: "flaky::purge_realm" }, () => {
      throw new Error("flaky store is down");
    });
    expect((await call(server, "DELETE", `/api/realms/${realmId}`)).status).toBe(500);

    const error = { error: `Realm ${realmId} is being deleted` };
    expect(await call(server, "POST", `/api/realms/${realmId}/export`, {}, key)).toEqual({
      status: 409,
      body: error,
    });
    expect(await call(server, "POST", `/api/realms/${realmId}/export`, { scrubSecrets: false })).toEqual({
      status: 409,
      body: error,
    });
  });
});
