import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  archiveRealm,
  call,
  createAgent,
  markRealmDeleting,
  newRealm,
  realmKey,
} from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.close();
});

describe("channel bindings and the realm's state", () => {
  it("refuses to bind a channel to an agent of an archived realm or of one being deleted", async () => {
    const archived = await newRealm(server);
    const archivedAgent = await createAgent(server, archived);
    await archiveRealm(server, archived);
    expect(
      await call(server, "POST", "/api/channels", {
        platform: "slack",
        channelId: "C1",
        agentId: archivedAgent,
      }),
    ).toEqual({ status: 409, body: { error: `Realm ${archived} is archived and read-only` } });

    const going = await newRealm(server);
    const goingAgent = await createAgent(server, going);
    await markRealmDeleting(server, going);
    expect(
      await call(server, "POST", "/api/channels", {
        platform: "slack",
        channelId: "C2",
        agentId: goingAgent,
      }),
    ).toEqual({ status: 409, body: { error: `Realm ${going} is being deleted` } });
    expect((await call(server, "GET", "/api/channels")).body).toEqual([]);
  });

  it("leaves no binding of a realm whose key bound a channel while the realm was being deleted", async () => {
    const realmId = await newRealm(server);
    const agentId = await createAgent(server, realmId);
    const key = await realmKey(server, realmId);
    // The tenant binds between the channels' purge and the agents' (a purge that runs in between).
    const { engine } = server.service;
    const original = engine.functions.get("directive::purge_realm");
    let bound: { status: number } | undefined;
    engine.worker("spy").registerFunction({ id: "directive::purge_realm" }, async (input, context) => {
      bound ??= await call(
        server,
        "POST",
        "/api/channels",
        { platform: "slack", channelId: "C-RACE", agentId },
        key,
      );
      return original?.handler(input, context);
    });
    expect((await call(server, "DELETE", `/api/realms/${realmId}`)).body).toEqual({ deleted: true });
    expect(bound?.status).toBe(409);
    expect((await call(server, "GET", "/api/channels")).body).toEqual([]);
    // The channel id is free for another realm's agent.
    const other = await createAgent(server, await newRealm(server));
    const key2 = await realmKey(server, (await call(server, "GET", `/api/agents/${other}`)).body.realmId);
    expect(
      (
        await call(
          server,
          "POST",
          "/api/channels",
          { platform: "slack", channelId: "C-RACE", agentId: other },
          key2,
        )
      ).status,
    ).toBe(201);
  });
});
