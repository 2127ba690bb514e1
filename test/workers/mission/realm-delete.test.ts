import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemPrincipal } from "../../../src/engine/types.ts";
import { call, markRealmDeleting, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

/** A mission write racing its realm's delete leaves nothing of the realm behind. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const trigger = (function_id: string, payload: unknown) =>
  server.service.engine.trigger({ function_id, payload }) as Promise<unknown>;

describe("a mission comment racing its realm's delete", () => {
  it("is taken back out when the delete purged the missions between the count and the comment", async () => {
    const realmId = await newRealm(server, "doomed");
    const key = await realmKey(server, realmId);
    const mission = await call(server, "POST", "/api/missions", { realmId, title: "t", createdBy: "x" }, key);
    const commentsScope = `mission_comments:${realmId}:${mission.body.id}`;
    const { engine } = server.service;
    const original = engine.functions.get("state::set");
    if (!original) throw new Error("no state worker");
    let armed = true;
    // The delete starts (marker, then the missions' purge) just before the comment itself is written.
    engine.worker("race").registerFunction({ id: "state::set" }, async (input, context) => {
      if (armed && (input as { scope?: string }).scope === commentsScope) {
        armed = false;
        await markRealmDeleting(server, realmId);
        await engine.trigger({
          function_id: "mission::purge_realm",
          payload: { realmId },
          auth: systemPrincipal,
        });
      }
      return original.handler(input, context);
    });
    const comment = await call(
      server,
      "POST",
      `/api/missions/${realmId}/${mission.body.id}/comments`,
      { authorId: "x", body: "late" },
      key,
    );
    expect(armed).toBe(false);
    expect(comment.status, JSON.stringify(comment.body)).toBe(409);
    const left = (await trigger("state::list", { scope: commentsScope, limit: 10 })) as { items: unknown[] };
    expect(left.items).toEqual([]);
  });
});
