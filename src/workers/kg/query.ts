import type { z } from "zod";
import type { StateClient } from "../../engine/state/client.ts";
import { IncomingReader, inverseType, withInverses } from "./inverse.ts";
import {
  type Direction,
  type EntityVersion,
  MAX_RESULTS,
  type QueryInput,
  type Relation,
  type TimeRange,
  type TraverseInput,
  type traversalAnswer,
} from "./schema.ts";
import { incomingScope, loadHead, versionKey, versionsIn, versionsScope } from "./store.ts";

/** An edge as traversal sees it: outgoing as stored, incoming as its inverse (`inverse:<type>`). */
interface Edge {
  to: string;
  type: string;
}

/**
 * The graph as it stood in a range of time (or now): each entity's versions in scope, and the edges
 * those versions hold, both ways. Reads are per entity reached, never a scan of the graph.
 */
class GraphView {
  private readonly versionCache = new Map<string, EntityVersion[]>();
  private readonly state: StateClient;
  private readonly agentId: string;
  private readonly range: TimeRange | undefined;

  constructor(state: StateClient, agentId: string, range?: TimeRange) {
    this.state = state;
    this.agentId = agentId;
    this.range = range;
  }

  /** Now: the current version (none for a stub); in a range: every version overlapping it. */
  async versions(entity: string): Promise<EntityVersion[]> {
    const cached = this.versionCache.get(entity);
    if (cached) return cached;
    let versions: EntityVersion[];
    if (this.range) {
      versions = await versionsIn(this.state, this.agentId, entity, this.range);
    } else {
      const head = await loadHead(this.state, this.agentId, entity);
      const current =
        head && !head.stub
          ? await this.state.get<EntityVersion>(versionsScope(this.agentId), versionKey(entity, head.version))
          : null;
      versions = current ? [current] : [];
    }
    this.versionCache.set(entity, versions);
    return versions;
  }

  /** Relations the entity holds in scope (now: read from its head, which carries them). */
  async outgoing(entity: string): Promise<Edge[]> {
    if (!this.range) {
      const head = await loadHead(this.state, this.agentId, entity);
      return (head?.relations ?? []).map((relation) => ({ to: relation.target, type: relation.type }));
    }
    return dedupe((await this.versions(entity)).flatMap((version) => version.relations.map(edgeOf)));
  }

  /**
   * Relations other entities hold towards this one in scope, as their inverses, from at most
   * MAX_SOURCES_READ of the entities that ever related to it (each is one more read).
   */
  async incoming(entity: string): Promise<Edge[]> {
    const edges: Edge[] = [];
    let read = 0;
    for await (const source of sources(this.state, this.agentId, entity)) {
      if (read++ >= MAX_SOURCES_READ) break;
      for (const edge of await this.outgoing(source)) {
        if (edge.to === entity) edges.push({ to: source, type: inverseType(edge.type) });
      }
    }
    return dedupe(edges);
  }

  async edges(entity: string, direction: Direction): Promise<Edge[]> {
    const out = direction === "incoming" ? [] : await this.outgoing(entity);
    const into = direction === "outgoing" ? [] : await this.incoming(entity);
    return [...out, ...into];
  }
}

/**
 * The most sources read for one entity's incoming relations, and the most entities one query visits:
 * an entity thousands of others point at (a hub) made every query or traversal touching it read each of
 * them, a second or more for an answer of at most 500 versions or nodes.
 */
export const MAX_SOURCES_READ = 1000;
export const MAX_VISITED = 1000;

/** Sources that ever related to `target`, read a page at a time (a caller that stops early reads no more). */
async function* sources(state: StateClient, agentId: string, target: string): AsyncGenerator<string> {
  for await (const { key } of state.scan(incomingScope(agentId), `${target}\u0001`)) {
    yield key.slice(target.length + 1);
  }
}

const edgeOf = (relation: Relation): Edge => ({ to: relation.target, type: relation.type });

function dedupe(edges: Edge[]): Edge[] {
  const seen = new Set<string>();
  return edges.filter((edge) => {
    const key = `${edge.to}\u0001${edge.type}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A filter names relation types; it follows a relation both ways (`works_at` also matches `inverse:works_at`). */
function passes(edge: Edge, filter: string[] | undefined): boolean {
  if (!filter) return true;
  return filter.includes(edge.type) || filter.includes(edge.type.replace(/^inverse:/, ""));
}

/**
 * kg::query_temporal: the start entity's versions in scope, then those of every entity reachable within
 * `depth` steps along relations (both ways, optionally filtered), breadth first, at most 500 versions.
 * An unknown entity is an empty answer. Each version returned carries its inverse relations (inverse.ts).
 */
export async function queryTemporal(state: StateClient, input: QueryInput): Promise<EntityVersion[]> {
  const view = new GraphView(state, input.agentId, input.timeRange);
  const results: EntityVersion[] = [];
  const seen = new Set([input.entity]);
  let frontier = [input.entity];
  for (let depth = 0; frontier.length > 0 && results.length < MAX_RESULTS; depth++) {
    const next: string[] = [];
    for (const entity of frontier) {
      // Versions past the 500th would be cut off anyway: none is read.
      if (results.length >= MAX_RESULTS) break;
      results.push(...(await view.versions(entity)));
      if (depth === input.depth || seen.size >= MAX_VISITED) continue;
      for (const edge of await view.edges(entity, "both")) {
        if (!passes(edge, input.relationFilter) || seen.has(edge.to)) continue;
        if (seen.size >= MAX_VISITED) break;
        seen.add(edge.to);
        next.push(edge.to);
      }
    }
    frontier = next;
  }
  return withInverses(new IncomingReader(state, input.agentId), results.slice(0, MAX_RESULTS));
}

export type Traversal = z.infer<typeof traversalAnswer>;

/**
 * kg::traverse over the current graph: breadth first from the start, `direction` along relations
 * (outgoing), their inverses (incoming) or both, to `maxDepth` steps and at most `maxNodes` entities.
 * `paths` holds a shortest path from the start to each entity reached; `adjacency` each expanded
 * entity's neighbours. Cycles are visited once. An unknown start is an empty traversal.
 */
export async function traverse(state: StateClient, input: TraverseInput): Promise<Traversal> {
  const view = new GraphView(state, input.agentId);
  const start = input.startEntity;
  if (!(await loadHead(state, input.agentId, start))) return { adjacency: {}, paths: {}, nodeCount: 0 };
  // Entity names are user data: maps without a prototype, so "__proto__" is a name like any other.
  const adjacency: Record<string, string[]> = Object.create(null);
  const paths: Record<string, string[]> = Object.create(null);
  paths[start] = [start];
  let frontier = [start];
  let count = 1;
  for (let depth = 0; depth < input.maxDepth && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const entity of frontier) {
      const neighbours = [...new Set((await view.edges(entity, input.direction)).map((edge) => edge.to))];
      adjacency[entity] = neighbours;
      for (const neighbour of neighbours) {
        if (Object.hasOwn(paths, neighbour) || count >= input.maxNodes) continue;
        paths[neighbour] = [...(paths[entity] as string[]), neighbour];
        count++;
        next.push(neighbour);
      }
    }
    frontier = next;
  }
  return { adjacency, paths, nodeCount: count };
}
