/**
 * Writes to the scopes someone watches, counted in this process. A cache of such a scope's records
 * (realms, read before every model call) compares the count with the one it read at: any write through
 * this process's state functions since makes the cached record stale at once. Writes made by other
 * processes are not counted here; such a cache bounds its age for them.
 */
const writes = new Map<string, number>();

/** Starts counting the scope's writes; the answer tells the count so far. */
export function watchScope(scope: string): () => number {
  if (!writes.has(scope)) writes.set(scope, 0);
  return () => writes.get(scope) ?? 0;
}

/** Counts a write to the scope, if it is watched. */
export function wroteScope(scope: string): void {
  const count = writes.get(scope);
  if (count !== undefined) writes.set(scope, count + 1);
}
