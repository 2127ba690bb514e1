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

export async function versionsOf(
  state: StateClient,
  agentId: string,
  entity: string,
): Promise<EntityVersion[]> {
  const versions: EntityVersion[] = [];
  for await (const { value } of state.scan<EntityVersion>(versionsScope(agentId), `${entity}\u0001`))
    versions.push(value);
  return versions;
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
