import type { StateClient } from "../../engine/state/client.ts";
import { IncomingReader, withInverses } from "./inverse.ts";
import type { Relation } from "./schema.ts";
import { loadHead, MAX_VERSIONS_READ, sameRelation, versionAt, versionsBetween } from "./store.ts";

/**
 * kg::timeline: the entity's versions, oldest first, the latest MAX_VERSIONS_READ of them (an unknown
 * entity: none), each with the inverse relations others held towards it while it was valid (inverse.ts).
 */
export async function timeline(state: StateClient, agentId: string, entity: string) {
  const head = await loadHead(state, agentId, entity);
  const versions =
    head && !head.stub
      ? await versionsBetween(state, agentId, entity, head.version - MAX_VERSIONS_READ + 1, head.version)
      : [];
  return (await withInverses(new IncomingReader(state, agentId), versions)).map((version) => ({
    version: version.version,
    type: version.type,
    properties: version.properties,
    relations: version.relations,
    createdAt: version.validFrom,
    validFrom: version.validFrom,
    validUntil: version.validUntil,
  }));
}

type Change = { property: string; value: unknown } | { relation: Relation };

/**
 * kg::diff: the entity at `timestamp1` against the entity at `timestamp2`, property by property and
 * relation by relation: what the later state has that the earlier lacks (`added`), the reverse
 * (`removed`), and properties whose value changed (`modified: [{property, before, after}]`).
 */
export async function diff(
  state: StateClient,
  agentId: string,
  entity: string,
  timestamp1: number,
  timestamp2: number,
) {
  // Two versions found by binary search, never the whole history (versionAt).
  const before = await versionAt(state, agentId, entity, timestamp1);
  const after = await versionAt(state, agentId, entity, timestamp2);
  const beforeProps = before?.properties ?? {};
  const afterProps = after?.properties ?? {};
  const added: Change[] = [];
  const removed: Change[] = [];
  const modified: Array<{ property: string; before: unknown; after: unknown }> = [];
  for (const [property, value] of Object.entries(afterProps)) {
    if (!Object.hasOwn(beforeProps, property)) added.push({ property, value });
    else if (JSON.stringify(beforeProps[property]) !== JSON.stringify(value)) {
      modified.push({ property, before: beforeProps[property], after: value });
    }
  }
  for (const [property, value] of Object.entries(beforeProps)) {
    if (!Object.hasOwn(afterProps, property)) removed.push({ property, value });
  }
  const beforeRelations = before?.relations ?? [];
  const afterRelations = after?.relations ?? [];
  for (const relation of afterRelations) {
    if (!beforeRelations.some((other) => sameRelation(other, relation))) added.push({ relation });
  }
  for (const relation of beforeRelations) {
    if (!afterRelations.some((other) => sameRelation(other, relation))) removed.push({ relation });
  }
  return {
    entity,
    fromVersion: before?.version ?? null,
    toVersion: after?.version ?? null,
    added,
    removed,
    modified,
  };
}
