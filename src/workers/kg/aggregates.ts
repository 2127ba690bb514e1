import { randomUUID } from "node:crypto";
import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import { Connectivity } from "./connectivity.ts";
import type { EntityHead } from "./schema.ts";
import { headsScope, statsScope } from "./store.ts";

/**
 * kg::stats from running totals instead of a pass over every head (issue #34).
 *
 * Stored, per graph (`kg_stats:<agentId>`): entities, relations and a count of adds, each add counting
 * itself with increments in the transaction that writes it, so the totals are exact under concurrency
 * and survive restarts on either backend. `epoch` names one life of the totals: a record without it
 * was made by increments after a purge, and is recounted like a graph written before the totals.
 *
 * Connected components are not a sum, so they are kept in memory (connectivity.ts) beside the totals
 * they match: a mirror of the graph's edges that each add of this process updates once its transaction
 * is in. It answers when it has seen exactly the adds the totals have counted; otherwise (a restart, or
 * adds made by another node of a cluster) it is rebuilt from the heads once, and kept from then on.
 */
const KEY = "graph";
/** Rebuilds and re-reads before stats falls back to one uncached pass. */
const ATTEMPTS = 5;

interface Totals {
  epoch?: string;
  entities: number;
  relations: number;
  /** Adds counted since the totals began: what the mirror must have applied to match them. */
  adds: number;
}

/** One committed add, as the mirror applies it. */
export interface AppliedAdd {
  entity: string;
  version: number;
  targets: string[];
}

/** The graph's edges in memory, and which version of each entity they reflect. */
class Mirror {
  readonly graph = new Connectivity();
  private readonly versions = new Map<string, number>();
  private readonly targets = new Map<string, string[]>();
  relations = 0;
  epoch = "";
  applied = 0;

  /** The entity's edges become those of this version; false (and nothing changes) if it has a later one. */
  apply({ entity, version, targets }: AppliedAdd): boolean {
    if ((this.versions.get(entity) ?? -1) >= version) return false;
    this.graph.addNode(entity);
    for (const target of targets) {
      if (!this.versions.has(target)) this.versions.set(target, 0);
      this.graph.addEdge(entity, target);
    }
    const previous = this.targets.get(entity) ?? [];
    for (const target of previous) this.graph.removeEdge(entity, target);
    this.relations += targets.length - previous.length;
    this.versions.set(entity, version);
    this.targets.set(entity, targets);
    return true;
  }
}

export type GraphStatsAnswer = {
  totalEntities: number;
  totalRelations: number;
  avgDegree: number;
  connectedComponents: number;
};

function answer(entities: number, relations: number, components: number): GraphStatsAnswer {
  return {
    totalEntities: entities,
    totalRelations: relations,
    avgDegree: entities === 0 ? 0 : Math.round(((2 * relations) / entities) * 1000) / 1000,
    connectedComponents: components,
  };
}

/** Every head, read once, as a mirror. */
async function mirrorOf(state: StateClient, agentId: string): Promise<Mirror> {
  const mirror = new Mirror();
  // A scan lets other work in between its pages: 500 000 heads no longer freeze every realm's requests.
  for await (const { value } of state.scan<EntityHead>(headsScope(agentId))) {
    mirror.apply({
      entity: value.entity,
      version: value.version,
      targets: value.relations.map((relation) => relation.target),
    });
  }
  return mirror;
}

/**
 * Entities whose links this process mirrors, over all graphs: past it the graphs asked least recently
 * are forgotten (a forgotten graph's next stats rebuilds its mirror from the heads). Bounds the memory of
 * a service holding many large graphs.
 */
export const MIRRORED_ENTITIES = 1_000_000;

export class GraphStats {
  private readonly state: StateClient;
  private readonly mirrors = new Map<string, Mirror>();
  /** Graphs whose totals this process has seen: an add counts into them without reading them first. */
  private readonly counted = new Set<string>();
  private readonly recounts = new Map<string, Promise<void>>();
  /** Adds of this process between their transaction and their mirror update, per graph. */
  private readonly inFlight = new Map<string, { count: number; settled: Array<() => void> }>();

  private readonly maxMirrored: number;

  constructor(state: StateClient, maxMirrored = MIRRORED_ENTITIES) {
    this.state = state;
    this.maxMirrored = maxMirrored;
  }

  /** Before an add: the graph's totals exist (a graph written before them is counted once, here). */
  async prepare(agentId: string): Promise<void> {
    if (this.counted.has(agentId)) return;
    const totals = await this.state.get<Totals>(statsScope(agentId), KEY);
    if (totals?.epoch) this.counted.add(agentId);
    else await this.recount(agentId);
  }

  /** The batch op an add counts itself with: increments, so concurrent adds never lose one. */
  countOp(agentId: string, entities: number, relations: number): BatchOp {
    return {
      type: "update",
      scope: statsScope(agentId),
      key: KEY,
      ops: [
        { type: "increment", path: "entities", by: entities },
        { type: "increment", path: "relations", by: relations },
        { type: "increment", path: "adds", by: 1 },
      ],
    };
  }

  /** Around an add's transaction: `done(add)` once it is in (the mirror learns it), `done()` if not. */
  begin(agentId: string): (add?: AppliedAdd) => void {
    const entry = this.inFlight.get(agentId) ?? { count: 0, settled: [] };
    this.inFlight.set(agentId, entry);
    entry.count++;
    return (add) => {
      const mirror = this.mirrors.get(agentId);
      if (add && mirror?.apply(add)) mirror.applied++;
      entry.count--;
      if (entry.count === 0) this.inFlight.delete(agentId);
      for (const wake of entry.settled.splice(0)) wake();
    };
  }

  /** The graph is gone (purged): forget what was known of it. */
  forget(agentId: string): void {
    this.mirrors.delete(agentId);
    this.counted.delete(agentId);
  }

  async stats(agentId: string): Promise<GraphStatsAnswer> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const totals = await this.state.get<Totals>(statsScope(agentId), KEY);
      if (!totals?.epoch) {
        await this.recount(agentId);
        continue;
      }
      this.counted.add(agentId);
      const mirror = this.touch(agentId);
      if (mirror?.epoch === totals.epoch && mirror.applied === totals.adds) {
        if (mirror.graph.nodes === totals.entities && mirror.relations === totals.relations)
          return answer(totals.entities, totals.relations, mirror.graph.components);
      } else if (mirror?.epoch === totals.epoch && mirror.applied > totals.adds) {
        continue; // an add landed after the read
      } else {
        const entry = this.inFlight.get(agentId);
        if (entry) {
          // Adds of this process are between their transaction and the mirror: wait for one to settle.
          await new Promise<void>((wake) => entry.settled.push(wake));
          continue;
        }
      }
      await this.rebuild(agentId, totals);
    }
    // Writes kept landing during every rebuild: one pass over the heads, as a graph without totals.
    const mirror = await mirrorOf(this.state, agentId);
    return answer(mirror.graph.nodes, mirror.relations, mirror.graph.components);
  }

  /** A mirror from the heads, kept only if no add was counted while they were read. */
  private async rebuild(agentId: string, before: Totals): Promise<void> {
    const mirror = await mirrorOf(this.state, agentId);
    const after = await this.state.get<Totals>(statsScope(agentId), KEY);
    if (!after || after.epoch !== before.epoch || after.adds !== before.adds) return;
    mirror.epoch = before.epoch as string;
    mirror.applied = before.adds;
    this.keep(agentId, mirror);
  }

  /** The graph's mirror, now the most recently asked. */
  private touch(agentId: string): Mirror | undefined {
    const mirror = this.mirrors.get(agentId);
    if (mirror) {
      this.mirrors.delete(agentId);
      this.mirrors.set(agentId, mirror);
    }
    return mirror;
  }

  /** Keeps a mirror, forgetting the least recently asked ones past MIRRORED_ENTITIES (never this one). */
  private keep(agentId: string, mirror: Mirror): void {
    this.mirrors.delete(agentId);
    this.mirrors.set(agentId, mirror);
    let total = 0;
    for (const kept of this.mirrors.values()) total += kept.graph.nodes;
    for (const [id, kept] of this.mirrors) {
      if (total <= this.maxMirrored || id === agentId) break;
      this.mirrors.delete(id);
      total -= kept.graph.nodes;
    }
  }

  /** Totals for a graph that has none (written before them, or purged and added to since): counted once. */
  private recount(agentId: string): Promise<void> {
    let running = this.recounts.get(agentId);
    if (!running) {
      running = this.countFromHeads(agentId).finally(() => this.recounts.delete(agentId));
      this.recounts.set(agentId, running);
    }
    return running;
  }

  private async countFromHeads(agentId: string): Promise<void> {
    const found = await this.state.getVersioned<Totals>(statsScope(agentId), KEY);
    if (found?.value.epoch) {
      this.counted.add(agentId);
      return;
    }
    const mirror = await mirrorOf(this.state, agentId);
    const totals: Totals = {
      epoch: randomUUID(),
      entities: mirror.graph.nodes,
      relations: mirror.relations,
      adds: 0,
    };
    try {
      await this.state.set(statsScope(agentId), KEY, totals, found?.version ?? 0);
    } catch (error) {
      // Another recount won, or an add counted into a record without an epoch: the caller reads again.
      if (isConflict(error)) return;
      throw error;
    }
    mirror.epoch = totals.epoch as string;
    this.keep(agentId, mirror);
    this.counted.add(agentId);
  }
}
