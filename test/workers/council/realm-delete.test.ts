import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, markRealmDeleting, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

/**
 * A council write racing its realm's delete: whatever the delete's purge did not see is taken away
 * again, so nothing of a deleted realm's council outlives it (as every other realm-scoped worker does).
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const trigger = (function_id: string, payload: unknown) =>
  server.service.engine.trigger({ function_id, payload }) as Promise<unknown>;

/** Every activity entry (and the chain's head) kept for the realm. */
async function activityRecords(realmId: string): Promise<unknown[]> {
  const chainId = encodeURIComponent(realmId);
  const entries = (await trigger("state::list", {
    scope: "council_activity",
    prefix: `${chainId}:`,
    limit: 100,
  })) as { items: unknown[] };
  const head = await trigger("state::get", { scope: "council_activity_head", key: chainId });
  return [...entries.items, ...(head ? [head] : [])];
}

/** The realm's delete begins (marker, then the council's purge) right after `fn` has read the realm. */
function deleteRealmAfterNextRead(realmId: string): { fired: () => boolean } {
  const { engine } = server.service;
  const original = engine.functions.get("realm::get");
  if (!original) throw new Error("no realm worker");
  let armed = true;
  engine.worker(`race-${realmId}`).registerFunction({ id: "realm::get" }, async (input, context) => {
    const realm = await original.handler(input, context);
    if (armed && (input as { id?: string }).id === realmId) {
      armed = false;
      await markRealmDeleting(server, realmId);
      await trigger("council::purge_realm", { realmId });
    }
    return realm;
  });
  return { fired: () => !armed };
}

describe("a council write racing its realm's delete", () => {
  it("leaves no activity entry behind from an append that read the realm just before the purge", async () => {
    const realmId = await newRealm(server, "doomed");
    const key = await realmKey(server, realmId);
    const race = deleteRealmAfterNextRead(realmId);
    const appended = await call(
      server,
      "POST",
      "/api/council/activity",
      { realmId, actorKind: "human", actorId: "op", action: "late", entityType: "x", entityId: "y" },
      key,
    );
    expect(race.fired()).toBe(true);
    expect(appended.status).toBe(409);
    expect(appended.body).toEqual({ error: `Realm ${realmId} is being deleted` });
    expect(await activityRecords(realmId)).toEqual([]);
  });

  it("leaves no proposal and no entry behind from a submit that read the realm just before the purge", async () => {
    const realmId = await newRealm(server, "doomed");
    const key = await realmKey(server, realmId);
    const race = deleteRealmAfterNextRead(realmId);
    const submitted = await call(
      server,
      "POST",
      "/api/council/proposals",
      { realmId, kind: "custom", title: "late", requestedBy: "op" },
      key,
    );
    expect(race.fired()).toBe(true);
    expect(submitted.status).toBe(409);
    const proposals = (await trigger("state::list", {
      scope: `council_proposals:${realmId}`,
      limit: 100,
    })) as { items: unknown[] };
    expect(proposals.items).toEqual([]);
    expect(await activityRecords(realmId)).toEqual([]);
  });
});
