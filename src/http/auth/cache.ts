import type { Principal } from "../../engine/types.ts";

const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  hash: string;
  principal: Principal;
  expiresAt: number;
}

/**
 * Verified keys, so a request needs neither storage nor hashing to authenticate. Revocation evicts
 * by hash on every node at once (topic `auth.keys.revoked`); the TTL only bounds a missed event.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();

  get(token: string, now: number): Principal | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(token);
      return undefined;
    }
    return entry.principal;
  }

  set(token: string, hash: string, principal: Principal, now: number): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(token, { hash, principal, expiresAt: now + TTL_MS });
  }

  /** Revocations are rare, so a scan of at most MAX_ENTRIES is fine here. */
  evictHash(hash: string): void {
    for (const [token, entry] of this.entries) if (entry.hash === hash) this.entries.delete(token);
  }
}
