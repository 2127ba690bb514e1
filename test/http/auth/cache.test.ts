import { describe, expect, it } from "vitest";
import type { Principal } from "../../../src/engine/types.ts";
import { KeyCache } from "../../../src/http/auth/cache.ts";

const principal = { kind: "realm", realmId: "realm-a", keyId: "key-a" } as const satisfies Principal;

describe("the key cache", () => {
  it("keeps a verified key for later requests", () => {
    const cache = new KeyCache();
    cache.set("token", "hash", principal, 0, cache.current());
    expect(cache.get("token", 1)).toEqual(principal);
  });

  it("does not keep a key read before a revocation of any key on this node and verified after it", () => {
    const cache = new KeyCache();
    const since = cache.current();
    // The revocation lands while the lookup's read is in flight: the read may be older than it.
    cache.evictHash("hash");
    cache.set("token", "hash", principal, 0, since);
    expect(cache.get("token", 1)).toBeUndefined();
  });

  it("does not keep a key read before another node's revocation emptied the cache", () => {
    const cache = new KeyCache();
    const since = cache.current();
    cache.clear();
    cache.set("token", "hash", principal, 0, since);
    expect(cache.get("token", 1)).toBeUndefined();
    cache.set("token", "hash", principal, 0, cache.current());
    expect(cache.get("token", 1)).toEqual(principal);
  });
});
