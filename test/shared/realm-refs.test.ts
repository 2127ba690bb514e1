import { afterEach, describe, expect, it, vi } from "vitest";
import { wroteScope } from "../../src/engine/state/watch.ts";
import type { TriggerFn } from "../../src/engine/types.ts";
import { recheckRealm, requireRealm } from "../../src/shared/realm-refs.ts";

/** A realm worker stand-in that counts its reads and answers the realm as it is now. */
function realmWorker(status: "Active" | "Paused" = "Active") {
  const realm = { id: "realm-a", name: "a", owner: "ops", status, deleting: false };
  const reads: string[] = [];
  const trigger = (async (request: { function_id: string }) => {
    reads.push(request.function_id);
    return { ...realm };
  }) as TriggerFn;
  return { realm, reads, trigger };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("requireRealm's remembered reads", () => {
  it("reads a realm once for the read-only checks of one caller, and again once a realm is written here", async () => {
    const { realm, reads, trigger } = realmWorker();
    await requireRealm(trigger, "realm-a");
    await requireRealm(trigger, "realm-a");
    expect(reads).toHaveLength(1);
    realm.status = "Paused";
    wroteScope("realms");
    expect((await requireRealm(trigger, "realm-a"))?.status).toBe("Paused");
    expect(reads).toHaveLength(2);
  });

  it("reads the realm itself before a write, and in the re-check after one", async () => {
    const { realm, reads, trigger } = realmWorker();
    await requireRealm(trigger, "realm-a");
    await requireRealm(trigger, "realm-a", { write: true });
    realm.deleting = true;
    const undo = vi.fn(async () => undefined);
    await expect(recheckRealm(trigger, "realm-a", undo)).rejects.toThrow(/being deleted/);
    expect(undo).toHaveBeenCalledOnce();
    expect(reads).toHaveLength(3);
  });

  it("forgets what it read after a second, so a change made by another node arrives within it", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const { realm, reads, trigger } = realmWorker();
    await requireRealm(trigger, "realm-a");
    realm.status = "Paused"; // written elsewhere: no write of this process tells
    vi.advanceTimersByTime(500);
    expect((await requireRealm(trigger, "realm-a"))?.status).toBe("Active");
    vi.advanceTimersByTime(600);
    expect((await requireRealm(trigger, "realm-a"))?.status).toBe("Paused");
    expect(reads).toHaveLength(2);
  });

  it("keeps each caller's reads apart (two services in one process never share a realm)", async () => {
    const first = realmWorker("Active");
    const second = realmWorker("Paused");
    expect((await requireRealm(first.trigger, "realm-a"))?.status).toBe("Active");
    expect((await requireRealm(second.trigger, "realm-a"))?.status).toBe("Paused");
  });
});
