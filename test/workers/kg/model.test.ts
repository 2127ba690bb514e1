import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { setClock } from "../../../src/shared/clock.ts";
import type { EntityVersion, Relation } from "../../../src/workers/kg/schema.ts";
import { kgBackends } from "./backends.ts";

const backends = await kgBackends("KG model test");

const NAMES = ["a", "b", "c", "d", "e", "f"];
const TYPES = ["knows", "owns"];
let agents = 0;

/** The graph's rules written the slow, obvious way over every version. */
class Model {
  versions = new Map<string, EntityVersion[]>();
  stubs = new Set<string>();

  record(version: EntityVersion): void {
    const history = this.versions.get(version.entity) ?? [];
    const last = history.at(-1);
    if (last) last.validUntil = version.validFrom;
    history.push({ ...version });
    this.versions.set(version.entity, history);
    this.stubs.delete(version.entity);
    for (const relation of version.relations)
      if (!this.versions.has(relation.target)) this.stubs.add(relation.target);
  }

  inScope(entity: string, range?: { from: number; to: number }): EntityVersion[] {
    const history = this.versions.get(entity) ?? [];
    if (!range) return history.filter((v) => v.validUntil === null);
    return history.filter(
      (v) => v.validFrom <= range.to && (v.validUntil === null || v.validUntil >= range.from),
    );
  }

  neighbours(
    entity: string,
    range?: { from: number; to: number },
    filter?: string[],
    direction = "both",
  ): string[] {
    const found = new Set<string>();
    const passes = (type: string) => !filter || filter.includes(type);
    if (direction !== "incoming") {
      for (const v of this.inScope(entity, range))
        for (const r of v.relations) if (passes(r.type)) found.add(r.target);
    }
    if (direction !== "outgoing") {
      for (const source of this.versions.keys()) {
        for (const v of this.inScope(source, range)) {
          if (v.relations.some((r) => r.target === entity && passes(r.type))) found.add(source);
        }
      }
    }
    return [...found];
  }

  /** Entities reached by breadth-first search, with their distance. */
  reach(start: string, depth: number, next: (entity: string) => string[]): Map<string, number> {
    const distance = new Map([[start, 0]]);
    let frontier = [start];
    for (let d = 0; d < depth; d++) {
      const following: string[] = [];
      for (const entity of frontier) {
        for (const n of next(entity)) {
          if (!distance.has(n)) {
            distance.set(n, d + 1);
            following.push(n);
          }
        }
      }
      frontier = following;
    }
    return distance;
  }
}

const addArb = fc.record({
  entity: fc.constantFrom(...NAMES),
  relations: fc.uniqueArray(
    fc.record({ target: fc.constantFrom(...NAMES), type: fc.constantFrom(...TYPES) }),
    { maxLength: 3, selector: (r: Relation) => `${r.target}/${r.type}` },
  ),
  tick: fc.integer({ min: 0, max: 3 }),
  properties: fc.dictionary(fc.constantFrom("x", "y", "z"), fc.integer({ min: 0, max: 2 })),
});

describe.each(backends)("the knowledge graph against a brute-force model ($name)", ({ start }) => {
  let engine: Engine;
  let close: () => Promise<void>;
  let realmId: string;

  beforeAll(async () => {
    ({ engine, close } = await start());
    realmId = (
      (await engine.trigger({ function_id: "realm::create", payload: { name: "kg-model", owner: "t" } })) as {
        id: string;
      }
    ).id;
  });
  afterAll(async () => {
    setClock(null);
    await close();
  });

  it("answers query, traverse and stats exactly, now and over past ranges", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(addArb, { minLength: 1, maxLength: 12 }),
        fc.constantFrom(...NAMES),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 10 }),
        fc.option(fc.constantFrom(...TYPES), { nil: undefined }),
        async (adds, start, depth, from, span, filterType) => {
          const trigger = (function_id: string, payload: unknown) =>
            engine.trigger({ function_id, payload }) as Promise<unknown>;
          const agentId = (
            (await trigger("agent::create", { name: `model-${++agents}`, realmId })) as { id: string }
          ).id;
          const model = new Model();
          let now = 0;
          setClock({ now: () => now });
          try {
            for (const add of adds) {
              now += add.tick;
              const version = (await trigger("kg::add_temporal", {
                agentId,
                entity: add.entity,
                relations: add.relations,
                properties: add.properties,
                type: "thing",
              })) as EntityVersion;
              model.record(version);
            }
          } finally {
            setClock(null);
          }
          const range = { from, to: from + span };
          const filter = filterType ? [filterType, `inverse:${filterType}`] : undefined;
          for (const scope of [undefined, range]) {
            const got = (await trigger("kg::query_temporal", {
              agentId,
              entity: start,
              depth,
              ...(scope ? { timeRange: scope } : {}),
              ...(filter ? { relationFilter: filter } : {}),
            })) as EntityVersion[];
            const reached = model.reach(start, depth, (e) =>
              model.neighbours(e, scope, filterType ? [filterType] : undefined),
            );
            const expected = [...reached.keys()].flatMap((e) => model.inScope(e, scope));
            const key = (v: EntityVersion) => `${v.entity}@${v.version}`;
            expect(got.map(key).sort()).toEqual(expected.map(key).sort());
          }
          for (const direction of ["outgoing", "incoming", "both"]) {
            const traversal = (await trigger("kg::traverse", {
              agentId,
              startEntity: start,
              direction,
              maxDepth: Math.max(1, depth),
              maxNodes: 500,
            })) as { paths: Record<string, string[]>; nodeCount: number };
            const known = model.versions.has(start) || model.stubs.has(start);
            const reached = known
              ? model.reach(start, Math.max(1, depth), (e) =>
                  model.neighbours(e, undefined, undefined, direction),
                )
              : new Map();
            expect(traversal.nodeCount).toBe(reached.size);
            expect(
              Object.fromEntries(Object.entries(traversal.paths).map(([e, p]) => [e, p.length - 1])),
            ).toEqual(Object.fromEntries(reached));
          }
          // diff between two instants: the model's versions valid then, compared field by field.
          const at = (entity: string, t: number) =>
            (model.versions.get(entity) ?? []).find(
              (v) => v.validFrom <= t && (v.validUntil === null || t < v.validUntil),
            );
          const [t1, t2] = [from, from + span];
          const changes = (await trigger("kg::diff", {
            agentId,
            entity: start,
            timestamp1: t1,
            timestamp2: t2,
          })) as {
            added: unknown[];
            removed: unknown[];
            modified: unknown[];
            fromVersion: number | null;
            toVersion: number | null;
          };
          const before = at(start, t1);
          const after = at(start, t2);
          const relKey = (r: Relation) => `${r.target}/${r.type}`;
          const beforeRels = new Set((before?.relations ?? []).map(relKey));
          const afterRels = new Set((after?.relations ?? []).map(relKey));
          expect([changes.fromVersion, changes.toVersion]).toEqual([
            before?.version ?? null,
            after?.version ?? null,
          ]);
          const bp = (before?.properties ?? {}) as Record<string, number>;
          const ap = (after?.properties ?? {}) as Record<string, number>;
          const label = (c: unknown) => {
            const change = c as { relation?: Relation; property?: string; value?: unknown };
            return change.relation
              ? `rel:${relKey(change.relation)}`
              : `prop:${change.property}=${change.value}`;
          };
          expect(changes.added.map(label).sort()).toEqual(
            [
              ...[...afterRels].filter((r) => !beforeRels.has(r)).map((r) => `rel:${r}`),
              ...Object.keys(ap)
                .filter((k) => !(k in bp))
                .map((k) => `prop:${k}=${ap[k]}`),
            ].sort(),
          );
          expect(changes.removed.map(label).sort()).toEqual(
            [
              ...[...beforeRels].filter((r) => !afterRels.has(r)).map((r) => `rel:${r}`),
              ...Object.keys(bp)
                .filter((k) => !(k in ap))
                .map((k) => `prop:${k}=${bp[k]}`),
            ].sort(),
          );
          expect(changes.modified).toEqual(
            Object.keys(ap)
              .filter((k) => k in bp && bp[k] !== ap[k])
              .map((k) => ({ property: k, before: bp[k], after: ap[k] })),
          );
          const stats = (await trigger("kg::stats", { agentId })) as Record<string, number>;
          const entities = [...model.versions.keys(), ...model.stubs];
          const current = [...model.versions.keys()].flatMap((e) => model.inScope(e));
          const relations = current.reduce((sum, v) => sum + v.relations.length, 0);
          const components = new Set(
            entities.map((e) =>
              [...model.reach(e, entities.length, (x) => model.neighbours(x)).keys()].sort().join(","),
            ),
          ).size;
          expect(stats).toEqual({
            totalEntities: entities.length,
            totalRelations: relations,
            avgDegree:
              entities.length === 0 ? 0 : Math.round(((2 * relations) / entities.length) * 1000) / 1000,
            connectedComponents: components,
          });
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
