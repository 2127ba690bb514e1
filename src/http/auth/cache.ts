import type { Principal } from "../../engine/types.ts";

const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;
const REVOCATION_POLL_MS = 1_000;

interface Entry {
  hash: string;
  principal: Principal;
  expiresAt: number;
}

/**
 * Verified keys, so a request needs neither storage nor hashing to authenticate. A revocation on this
 * node evicts its key at once; one made by another node or process (the CLI) bumps the revocation
 * epoch in state, and `watchRevocations` empties the cache within a second of seeing it change.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  /**
   * Moves at every eviction. A key read from storage before a revocation and verified after it must not
   * be cached: its reader passes the generation it started in, and a stale one is not kept.
   */
  private generation = 0;

  /** The generation a lookup starts in, for `set`. */
  current(): number {
    return this.generation;
  }

  get(token: string, now: number): Principal | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(token);
      return undefined;
    }
    return entry.principal;
  }

  set(token: string, hash: string, principal: Principal, now: number, since: number): void {
    if (since !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(token, { hash, principal, expiresAt: now + TTL_MS });
  }

  /** Revocations are rare, so a scan of at most MAX_ENTRIES is fine here. */
  evictHash(hash: string): void {
    this.generation++;
    for (const [token, entry] of this.entries) if (entry.hash === hash) this.entries.delete(token);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}

/** Polls the revocation epoch (one small read a second) and empties the cache when it moves. */
export function watchRevocations(
  cache: KeyCache,
  readEpoch: () => Promise<number>,
  onError: (error: unknown) => void,
): { stop(): void } {
  let seen: number | undefined;
  let polling = false;
  const poll = async () => {
    if (polling) return;
    polling = true;
    try {
      const epoch = await readEpoch();
      if (seen !== undefined && epoch !== seen) cache.clear();
      seen = epoch;
    } catch (error) {
      // Unknown whether a key was revoked meanwhile: forget everything rather than trust stale entries.
      cache.clear();
      onError(error);
    } finally {
      polling = false;
    }
  };
  void poll();
  const timer = setInterval(poll, REVOCATION_POLL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
