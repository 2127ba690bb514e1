import type { StateClient } from "../../engine/state/client.ts";
import { IncomingReader, withInverses } from "./inverse.ts";
import type { EntityVersion, Relation } from "./schema.ts";
import { sameRelation, versionsOf } from "./store.ts";

/**
 * kg::timeline: every version of the entity, oldest first (an unknown entity: none), each with the
 * inverse relations others held towards it while it was valid (inverse.ts).
 */
export async function timeline(state: StateClient, agentId: string, entity: string) {
  const versions = await versionsOf(state, agentId, entity);
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

/** The version valid at `at` (epoch ms), or null before the first one. */
function versionAt(versions: EntityVersion[], at: number): EntityVersion | null {
  return versions.find((v) => v.validFrom <= at && (v.validUntil === null || at < v.validUntil)) ?? null;
}

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
  const versions = await versionsOf(state, agentId, entity);
  const before = versionAt(versions, timestamp1);
  const after = versionAt(versions, timestamp2);
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
