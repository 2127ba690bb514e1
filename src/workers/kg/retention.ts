import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { systemCall } from "../../engine/system-call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { RETENTION_CHUNK, yieldToOthers } from "../../shared/retention.ts";
import type { EntityVersion } from "./schema.ts";
import { realmGraphsScope, versionsScope } from "./store.ts";

/**
 * A version the retention may delete: superseded (closed by a later one) before the cutoff. The current
 * version of every entity (validUntil null) is never one, so its head, the graph's edges and totals
 * (kg::stats) and every answer about now stay as they were; only what was true before the cutoff and
 * has not been since is forgotten.
 */
export function isPrunableVersion(version: Pick<EntityVersion, "validUntil">, cutoff: number): boolean {
  return version.validUntil !== null && version.validUntil < cutoff;
}

/**
 * Prunes the history of every graph of every realm (each realm's graphs by the same rule, found through
 * the realm's own index); returns how many versions it deleted.
 */
export async function sweepHistory(trigger: TriggerFn, state: StateClient, cutoff: number): Promise<number> {
  let deleted = 0;
  let cursor: string | undefined;
  do {
    const page = await systemCall(trigger, "realm::list", { limit: 500, ...(cursor ? { cursor } : {}) });
    for (const realm of page.realms) {
      for await (const { key: agentId } of state.scan(realmGraphsScope(realm.id))) {
        deleted += await pruneGraph(state, agentId, cutoff);
      }
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return deleted;
}

/**
 * One graph's versions superseded before the cutoff, a chunk at a time. Keys sort by entity, then by
 * version number, and validUntil grows with the version: each entity loses its oldest versions first,
 * which keeps the kept ones a contiguous run the binary searches of store.ts rely on.
 */
export async function pruneGraph(state: StateClient, agentId: string, cutoff: number): Promise<number> {
  const scope = versionsScope(agentId);
  let deleted = 0;
  let cursor: string | undefined;
  do {
    const page = await state.list<EntityVersion>(scope, { limit: RETENTION_CHUNK, cursor });
    const old = page.items.filter((item) => isPrunableVersion(item.value, cutoff));
    for (let start = 0; start < old.length; start += 200) {
      deleted += await deleteVersions(state, scope, old.slice(start, start + 200));
      await yieldToOthers();
    }
    cursor = page.nextCursor ?? undefined;
    if (cursor) await yieldToOthers();
  } while (cursor);
  return deleted;
}

/**
 * The versions, if each is still the one read: a closed version is never written again, so a conflict
 * is the graph purged and written anew meanwhile; then each is tried alone, the changed ones kept.
 */
async function deleteVersions(
  state: StateClient,
  scope: string,
  versions: Array<{ key: string; version: number }>,
): Promise<number> {
  const op = ({ key, version }: { key: string; version: number }) => ({
    type: "delete" as const,
    scope,
    key,
    expectedVersion: version,
  });
  try {
    await state.batch(versions.map(op));
    return versions.length;
  } catch (error) {
    if (!isConflict(error)) throw error;
  }
  let deleted = 0;
  for (const version of versions) {
    try {
      await state.batch([op(version)]);
      deleted++;
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }
  return deleted;
}
