import type { Principal } from "../../engine/types.ts";

const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

/**
 * Verified keys by hash, so a request does not read storage to authenticate. Revocation evicts the
 * entry on every node at once (topic `auth.keys.revoked`); the TTL only bounds a missed event.
 */
export class KeyCache {
  private readonly entries = new Map<string, { principal: Principal; expiresAt: number }>();

  get(hash: string, now: number): Principal | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.principal;
  }

  set(hash: string, principal: Principal, now: number): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(hash, { principal, expiresAt: now + TTL_MS });
  }

  evict(hash: string): void {
    this.entries.delete(hash);
  }
}
