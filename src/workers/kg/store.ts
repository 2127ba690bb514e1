import type { StateClient } from "../../engine/state/client.ts";
import type { EntityHead, EntityVersion, Relation, TimeRange } from "./schema.ts";

/**
 * Each agent's graph in its own scopes (DESIGN §6: agentId on every call):
 * - heads: entity → its current state (version, relations): one read per entity a query touches;
 * - versions: `<entity>\0<version>` → every version, so a prefix listing is the entity's history in order;
 * - incoming: `<target>\0<source>` → whoever ever related to the target, so edges are found from either
 *   end without a scan (the source's versions say when the edge held).
 */
export const headsScope = (agentId: string) => `kg_heads:${agentId}`;
export const versionsScope = (agentId: string) => `kg_versions:${agentId}`;
export const incomingScope = (agentId: string) => `kg_in:${agentId}`;
/** The graph's running totals (aggregates.ts). */
export const statsScope = (agentId: string) => `kg_stats:${agentId}`;
/** The agents of a realm that have a graph: what a realm delete purges. */
export const realmGraphsScope = (realmId: string) => `kg_agents:${realmId}`;

export const versionKey = (entity: string, version: number) =>
  `${entity}\u0001${String(version).padStart(10, "0")}`;
export const incomingKey = (target: string, source: string) => `${target}\u0001${source}`;

export const sameRelation = (a: Relation, b: Relation) => a.target === b.target && a.type === b.type;

export function loadHead(state: StateClient, agentId: string, entity: string): Promise<EntityHead | null> {
  return state.get<EntityHead>(headsScope(agentId), entity);
}

/**
 * The most versions one read of an entity's history holds: an entity added to thousands of times (each
 * version up to the size of its properties) was read whole by timeline, diff and time-range queries,
 * gigabytes in memory and seconds of a blocked event loop for one request.
 */
export const MAX_VERSIONS_READ = 500;

/** Versions `first`..`last` of an entity (at most MAX_VERSIONS_READ, from `first`), by key: no scan. */
export async function versionsBetween(
  state: StateClient,
  agentId: string,
  entity: string,
  first: number,
  last: number,
): Promise<EntityVersion[]> {
  const numbers: number[] = [];
  for (let n = Math.max(1, first); n <= last && numbers.length < MAX_VERSIONS_READ; n++) numbers.push(n);
  const versions = await Promise.all(
    numbers.map((n) => state.get<EntityVersion>(versionsScope(agentId), versionKey(entity, n))),
  );
  return versions.filter((version): version is EntityVersion => version !== null);
}

/**
 * The number of the last version whose validFrom passes `test` (0: none), by binary search over the
 * version numbers: validFrom strictly increases with the version, so this reads about log2(n) versions.
 * A version missing below the latest was pruned by the retention (kg/retention.ts), which deletes an
 * entity's oldest versions first: it counts as passing (it began before every version kept), so the
 * search lands on the kept ones, and a time only pruned versions covered finds that pruned number
 * (read as nothing) instead of a later version that was not valid then.
 */
async function lastVersionWhere(
  state: StateClient,
  agentId: string,
  entity: string,
  latest: number,
  test: (validFrom: number) => boolean,
): Promise<number> {
  let low = 0;
  let high = latest;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    const version = await state.get<EntityVersion>(versionsScope(agentId), versionKey(entity, middle));
    if (version ? test(version.validFrom) : middle < latest) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** The entity's version valid at `at` (epoch ms), or null (before its first version, or none). */
export async function versionAt(
  state: StateClient,
  agentId: string,
  entity: string,
  at: number,
): Promise<EntityVersion | null> {
  const head = await loadHead(state, agentId, entity);
  if (!head || head.stub) return null;
  const number = await lastVersionWhere(state, agentId, entity, head.version, (from) => from <= at);
  if (number === 0) return null;
  return state.get<EntityVersion>(versionsScope(agentId), versionKey(entity, number));
}

/**
 * The entity's versions overlapping the range (see overlaps), oldest first, at most MAX_VERSIONS_READ:
 * a contiguous run of version numbers, found by binary search and read by key.
 */
export async function versionsIn(
  state: StateClient,
  agentId: string,
  entity: string,
  range: TimeRange,
): Promise<EntityVersion[]> {
  const head = await loadHead(state, agentId, entity);
  if (!head || head.stub) return [];
  // The last version begun before `from` is the first that can still be valid at `from`.
  const before = await lastVersionWhere(state, agentId, entity, head.version, (from) => from < range.from);
  const last = await lastVersionWhere(state, agentId, entity, head.version, (from) => from <= range.to);
  if (last === 0) return [];
  const versions = await versionsBetween(state, agentId, entity, Math.max(1, before), last);
  return versions.filter((version) => overlaps(version, range));
}

/** Versions whose validity overlaps the range (DESIGN §6): validFrom ≤ to and (open, or validUntil ≥ from). */
export function overlaps(version: EntityVersion, range: TimeRange): boolean {
  return version.validFrom <= range.to && (version.validUntil === null || version.validUntil >= range.from);
}

/** Sources that ever related to `target`. */
export async function sourcesOf(state: StateClient, agentId: string, target: string): Promise<string[]> {
  const sources: string[] = [];
  for await (const { key } of state.scan(incomingScope(agentId), `${target}\u0001`)) {
    sources.push(key.slice(target.length + 1));
  }
  return sources;
}

/** Deletes an agent's whole graph, its totals last; returns how many entities it had. */
export async function purgeGraph(state: StateClient, agentId: string): Promise<number> {
  let entities = 0;
  for (const scope of [
    headsScope(agentId),
    versionsScope(agentId),
    incomingScope(agentId),
    statsScope(agentId),
  ]) {
    const keys: string[] = [];
    for await (const { key } of state.scan(scope)) keys.push(key);
    for (const key of keys) await state.delete(scope, key);
    if (scope === headsScope(agentId)) entities = keys.length;
  }
  return entities;
}
