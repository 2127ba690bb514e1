import type { StateClient } from "../../engine/state/client.ts";
import type { EntityHead, EntityVersion, Relation, TimeRange } from "./schema.ts";
import { loadHead, sameRelation, sourcesOf, versionsIn } from "./store.ts";

/**
 * Spec (knowledge graph rule 2): adding `A -t-> B` creates `inverse:t` on B. B's stored versions are not
 * rewritten when someone relates to it (that would make every add write each target too); the inverses
 * are derived when B's versions are read, from the incoming index, for the versions being returned only.
 *
 * Which inverses a version shows:
 * - the current version (validUntil null): those of the relations the sources hold now;
 * - a closed version: those of the relations some source held at any time while it was valid.
 */
export const inverseType = (type: string) => `inverse:${type}`;

/** One read's view of the agent's graph: each head, source list and history read at most once. */
export class IncomingReader {
  private readonly heads = new Map<string, Promise<EntityHead | null>>();
  private readonly sourceLists = new Map<string, Promise<string[]>>();
  private readonly histories = new Map<string, Promise<EntityVersion[]>>();
  private readonly state: StateClient;
  private readonly agentId: string;

  constructor(state: StateClient, agentId: string) {
    this.state = state;
    this.agentId = agentId;
  }

  sources(entity: string): Promise<string[]> {
    return cached(this.sourceLists, entity, () => sourcesOf(this.state, this.agentId, entity));
  }

  async currentRelations(entity: string): Promise<Relation[]> {
    const head = await cached(this.heads, entity, () => loadHead(this.state, this.agentId, entity));
    return head?.relations ?? [];
  }

  /** The time the versions being read span (withInverses sets it): what a source's history is read over. */
  span: TimeRange = { from: 0, to: Number.MAX_SAFE_INTEGER };

  /**
   * The source's versions over the span, read once: by range, at most MAX_VERSIONS_READ of them, never a
   * whole history of any length (versionsIn).
   */
  history(entity: string): Promise<EntityVersion[]> {
    return cached(this.histories, entity, () => versionsIn(this.state, this.agentId, entity, this.span));
  }
}

function cached<T>(cache: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> {
  let found = cache.get(key);
  if (!found) {
    found = read();
    cache.set(key, found);
  }
  return found;
}

/** Validities are half-open [validFrom, validUntil): a source version that ended as this one began did not overlap. */
function overlapping(source: EntityVersion, version: EntityVersion): boolean {
  const end = version.validUntil ?? Number.POSITIVE_INFINITY;
  return source.validFrom < end && (source.validUntil === null || source.validUntil > version.validFrom);
}

/** The most inverse relations told of one version: an answer stays a size a model and a page can take. */
export const MAX_INVERSES = 1000;

/** The inverse relations of one version of an entity (see the rule above), in source order, at most MAX_INVERSES. */
export async function inversesOf(reader: IncomingReader, version: EntityVersion): Promise<Relation[]> {
  const found: Relation[] = [];
  // Seen by key, not by a scan of those found: an entity many sources point at (a hub, with thousands
  // of relations to it) was quadratic work on the event loop, seconds to minutes for one query.
  const seen = new Set<string>();
  for (const source of await reader.sources(version.entity)) {
    if (found.length >= MAX_INVERSES) break;
    const held =
      version.validUntil === null
        ? await reader.currentRelations(source)
        : (await reader.history(source))
            .filter((sourceVersion) => overlapping(sourceVersion, version))
            .flatMap((sourceVersion) => sourceVersion.relations);
    for (const relation of held) {
      if (relation.target !== version.entity) continue;
      const inverse = { target: source, type: inverseType(relation.type) };
      const key = `${inverse.target}\u0000${inverse.type}`;
      if (seen.has(key)) continue;
      seen.add(key);
      found.push(inverse);
      if (found.length >= MAX_INVERSES) break;
    }
  }
  return found;
}

/** The versions with their inverse relations after the stored ones (new objects: the inputs are left as they are). */
export function withInverses(reader: IncomingReader, versions: EntityVersion[]): Promise<EntityVersion[]> {
  if (versions.length > 0) {
    reader.span = {
      from: Math.min(...versions.map((version) => version.validFrom)),
      to: Math.max(...versions.map((version) => version.validUntil ?? Number.MAX_SAFE_INTEGER)),
    };
  }
  return Promise.all(
    versions.map(async (version) => {
      const inverses = (await inversesOf(reader, version)).filter(
        (inverse) => !version.relations.some((relation) => sameRelation(relation, inverse)),
      );
      return inverses.length === 0 ? version : { ...version, relations: [...version.relations, ...inverses] };
    }),
  );
}
