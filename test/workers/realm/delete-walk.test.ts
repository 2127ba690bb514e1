import { describe, expect, it } from "vitest";
import { call } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { createRealmFixture, snapshotRealm } from "../../helpers/fixtures.ts";

const ctx = serverWithFakeModel();

describe("realm delete, walking every scope", () => {
  it("leaves nothing of a realm holding one of everything, and another realm as it was", async () => {
    const a = await createRealmFixture(ctx.server, "a");
    const b = await createRealmFixture(ctx.server, "b");
    const aBefore = await snapshotRealm(ctx.server, a);
    const bBefore = await snapshotRealm(ctx.server, b);
    expect(aBefore.size).toBeGreaterThan(0);

    expect(await call(ctx.server, "DELETE", `/api/realms/${a.realmId}`)).toEqual({
      status: 200,
      body: { deleted: true },
    });

    // Both fixtures bind a Slack channel, so each walk also finds the other's binding by its platform.
    const left = [...(await snapshotRealm(ctx.server, a)).keys()].filter((key) => !bBefore.has(key));
    expect(left).toEqual([]);
    const bAfter = await snapshotRealm(ctx.server, b);
    for (const key of aBefore.keys()) bAfter.delete(key);
    for (const key of aBefore.keys()) bBefore.delete(key);
    expect(bAfter).toEqual(bBefore);
  });
});
