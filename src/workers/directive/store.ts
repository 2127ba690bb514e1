import type { StateClient } from "../../engine/state/client.ts";
import type { AncestryEntry, Directive, ListInput } from "./schema.ts";

/** One scope per realm, so a listing reads only that realm's directives and a purge only deletes them. */
export const directivesScope = (realmId: string) => `directives:${realmId}`;

export function loadDirective(state: StateClient, realmId: string, id: string): Promise<Directive | null> {
  return state.get<Directive>(directivesScope(realmId), id);
}

/** The realm's directives that pass every given filter, oldest first (ties by id, so the order is stable). */
/**
 * Where each directive matching the filter stands (id and creation time), not the directives: a realm's
 * directives have no size limit, and holding every matching record to answer one page let a realm key's
 * listing take the process's memory. The page's records are read afterwards (directivesById).
 */
export async function matchingDirectives(
  state: StateClient,
  filter: ListInput,
): Promise<Array<Pick<Directive, "id" | "createdAt">>> {
  const matches: Array<Pick<Directive, "id" | "createdAt">> = [];
  for await (const { value } of state.scan<Directive>(directivesScope(filter.realmId))) {
    if (filter.level !== undefined && value.level !== filter.level) continue;
    if (filter.status !== undefined && value.status !== filter.status) continue;
    if (filter.parentId !== undefined && value.parentId !== filter.parentId) continue;
    matches.push({ id: value.id, createdAt: value.createdAt });
  }
  return matches;
}

/** The directives of these ids, in their order (one deleted meanwhile is left out). */
export async function directivesById(
  state: StateClient,
  realmId: string,
  ids: string[],
): Promise<Directive[]> {
  const found = await Promise.all(ids.map((id) => loadDirective(state, realmId, id)));
  return found.filter((directive): directive is Directive => directive !== null);
}

/**
 * The directive and its parents up to the root. Parents are checked on create, but a parent can be
 * missing later (a state edit, a partial import) or the chain can loop, so the walk stops at a missing
 * parent or at the first directive met twice instead of failing or running forever.
 */
export async function ancestryOf(state: StateClient, start: Directive): Promise<AncestryEntry[]> {
  const ancestry: AncestryEntry[] = [];
  const seen = new Set<string>();
  let current: Directive | null = start;
  while (current && !seen.has(current.id)) {
    seen.add(current.id);
    ancestry.push({ id: current.id, title: current.title, level: current.level });
    current = current.parentId ? await loadDirective(state, start.realmId, current.parentId) : null;
  }
  return ancestry;
}

/** Deletes every directive of the realm; returns how many there were (0 the second time). */
export async function purgeDirectives(state: StateClient, realmId: string): Promise<number> {
  const scope = directivesScope(realmId);
  // Keys first, deletes after: deleting while paging would move the cursor's ground under it.
  const keys: string[] = [];
  for await (const { key } of state.scan(scope)) keys.push(key);
  for (const key of keys) await state.delete(scope, key);
  return keys.length;
}
