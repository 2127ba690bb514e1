/**
 * Writes to the scopes someone watches, counted in this process. A cache of such a scope's records
 * (realms, read before every model call) compares the count with the one it read at: any write through
 * this process's state functions since makes the cached record stale at once. Writes made by other
 * processes are not counted here; such a cache bounds its age for them.
 */
const writes = new Map<string, number>();

/** The scope's writes counted so far; counting starts with the first ask. */
function writesTo(scope: string): number {
  const count = writes.get(scope);
  if (count !== undefined) return count;
  writes.set(scope, 0);
  return 0;
}

/** Counts a write to the scope, if it is watched. */
export function wroteScope(scope: string): void {
  const count = writes.get(scope);
  if (count !== undefined) writes.set(scope, count + 1);
}

/**
 * Records of watched scopes as one reader read them, for read-only checks on a hot path: a record is
 * answered again until this process writes its scope or `ttlMs` pass (the bound for writes made by
 * other processes). Each reader (a service's trigger, say) has its own: two services in one process,
 * as in tests, never share records.
 */
export class RecentReads<Reader extends object, T> {
  private readonly kept = new WeakMap<Reader, Map<string, { value: T; writes: number; at: number }>>();

  private readonly ttlMs: number;
  private readonly maxPerReader: number;

  constructor(ttlMs: number, maxPerReader = 1000) {
    this.ttlMs = ttlMs;
    this.maxPerReader = maxPerReader;
  }

  async read(reader: Reader, scope: string, key: string, load: () => Promise<T>): Promise<T> {
    let byKey = this.kept.get(reader);
    if (!byKey) {
      byKey = new Map();
      this.kept.set(reader, byKey);
    }
    const written = writesTo(scope);
    const id = `${scope}\u0000${key}`;
    const kept = byKey.get(id);
    if (kept && kept.writes === written && performance.now() - kept.at < this.ttlMs) return kept.value;
    const value = await load();
    if (byKey.size >= this.maxPerReader) byKey.clear();
    byKey.set(id, { value, writes: written, at: performance.now() });
    return value;
  }
}
