import { describe, expect, it } from "vitest";
import { call, createRealm, realmKey } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";

/** A realm's keys go with the realm: none of them works once it is deleted. */
const env = serverWithFakeModel();

const complete = (key: string) =>
  env.server.request("/v1/chat/completions", {
    method: "POST",
    key,
    json: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
  });

describe("auth::purge_realm (part of realm::delete)", () => {
  it("revokes every key bound to a deleted realm, at once, and no other key", async () => {
    const doomed = (await createRealm(env.server, { name: "Doomed" })).id;
    const kept = (await createRealm(env.server, { name: "Kept" })).id;
    const [first, second, other] = [
      await realmKey(env.server, doomed),
      await realmKey(env.server, doomed),
      await realmKey(env.server, kept),
    ];
    // Used once before the delete, so the key is in the key cache too.
    expect((await complete(first)).status).toBe(200);
    expect((await call(env.server, "GET", `/api/realms/${doomed}`, undefined, second)).status).toBe(200);

    expect((await call(env.server, "DELETE", `/api/realms/${doomed}`)).body).toEqual({ deleted: true });

    expect((await complete(first)).status).toBe(401);
    for (const key of [first, second]) {
      expect((await call(env.server, "GET", "/api/realms", undefined, key)).status).toBe(401);
      expect((await call(env.server, "GET", "/api/agents", undefined, key)).status).toBe(401);
    }
    const listed = (await call(env.server, "GET", "/api/keys")).body.keys;
    expect(listed.filter((k: { realmId?: string }) => k.realmId === doomed)).toEqual([]);
    expect(listed.filter((k: { realmId?: string }) => k.realmId === kept)).toHaveLength(1);
    expect((await complete(other)).status).toBe(200);
    expect((await call(env.server, "GET", "/api/realms")).status).toBe(200);
  });

  it("is refused to a realm-bound caller and to no admin or system one", async () => {
    const realmId = (await createRealm(env.server)).id;
    const key = await realmKey(env.server, realmId);
    const trigger = env.server.service.engine.trigger.bind(env.server.service.engine);
    await expect(
      trigger({
        function_id: "auth::purge_realm",
        payload: { realmId },
        auth: { kind: "realm", realmId, keyId: "k" },
      }),
    ).rejects.toMatchObject({ status: 403 });
    expect((await call(env.server, "GET", `/api/realms/${realmId}`, undefined, key)).status).toBe(200);
    expect(
      await trigger({
        function_id: "auth::purge_realm",
        payload: { realmId },
        auth: { kind: "admin", keyId: "a" },
      }),
    ).toEqual({ realmId, revoked: 1 });
    expect((await call(env.server, "GET", `/api/realms/${realmId}`, undefined, key)).status).toBe(401);
  });
});
