import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { stateClient } from "../../../src/engine/state/client.ts";
import { GraphStats } from "../../../src/workers/kg/aggregates.ts";
import type { EntityHead } from "../../../src/workers/kg/schema.ts";
import { headsScope, statsScope } from "../../../src/workers/kg/store.ts";
import { kgBackends } from "./backends.ts";

const backends = await kgBackends("KG stats test");

const NAMES = ["a", "b", "c", "d", "e", "f", "g"];
const TYPES = ["knows", "owns"];

/** kg::stats as the code before running totals computed it: one pass over every head, a union-find. */
async function recount(engine: Engine, agentId: string) {
  const state = stateClient((request) => engine.trigger(request));
  const parent = new Map<string, string>();
  const find = (node: string): string => {
    while (parent.get(node) !== node) node = parent.get(node) as string;
    return node;
  };
  let relations = 0;
  const edges: Array<[string, string]> = [];
  for await (const { value } of state.scan<EntityHead>(headsScope(agentId))) {
    parent.set(value.entity, value.entity);
    relations += value.relations.length;
    for (const relation of value.relations) edges.push([value.entity, relation.target]);
  }
  let components = parent.size;
  for (const [a, b] of edges) {
    const [ra, rb] = [find(a), find(b)];
    if (ra !== rb) {
      parent.set(ra, rb);
      components--;
    }
  }
  const entities = parent.size;
  return {
    totalEntities: entities,
    totalRelations: relations,
    avgDegree: entities === 0 ? 0 : Math.round(((2 * relations) / entities) * 1000) / 1000,
    connectedComponents: components,
  };
}

const addArb = fc.record({
  kind: fc.constant("add" as const),
  entity: fc.constantFrom(...NAMES),
  relations: fc.uniqueArray(
    fc.record({ target: fc.constantFrom(...NAMES), type: fc.constantFrom(...TYPES) }),
    { maxLength: 3, selector: (r) => `${r.target}/${r.type}` },
  ),
});
const opArb = fc.oneof(
  { weight: 12, arbitrary: addArb },
  { weight: 1, arbitrary: fc.constant({ kind: "purge" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "stats" as const }) },
);

describe.each(backends)("kg::stats from running totals ($name)", ({ start }) => {
  let engine: Engine;
  let close: () => Promise<void>;
  let realmId: string;
  let agents = 0;
  const trigger = (function_id: string, payload: unknown) => engine.trigger({ function_id, payload });
  const newAgent = async () =>
    ((await trigger("agent::create", { name: `stats-${++agents}`, realmId })) as { id: string }).id;
  const add = (agentId: string, entity: string, relations: Array<{ target: string; type: string }>) =>
    trigger("kg::add_temporal", { agentId, entity, type: "thing", relations });
  const stats = (agentId: string) => trigger("kg::stats", { agentId });
  /** What a restarted process (or another node) answers: no totals or edges in memory yet. */
  const restarted = (agentId: string) => new GraphStats(stateClient((r) => engine.trigger(r))).stats(agentId);

  beforeAll(async () => {
    ({ engine, close } = await start());
    realmId = (
      (await trigger("realm::create", { name: "kg-stats", owner: "t" })) as {
        id: string;
      }
    ).id;
  });
  afterAll(async () => {
    await close();
  });

  it("equals a recount after random adds, new versions and purges", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        const agentId = await newAgent();
        for (const op of ops) {
          if (op.kind === "add") await add(agentId, op.entity, op.relations);
          else if (op.kind === "purge") await trigger("kg::purge_agent", { realmId, agentId });
          else expect(await stats(agentId)).toEqual(await recount(engine, agentId));
        }
        const expected = await recount(engine, agentId);
        expect(await stats(agentId)).toEqual(expected);
        expect(await restarted(agentId)).toEqual(expected);
      }),
      { numRuns: 30 },
    );
  }, 120_000);

  it("counts concurrent adds exactly, in the stored totals too", async () => {
    const agentId = await newAgent();
    await add(agentId, "seed", []);
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        add(agentId, NAMES[i % NAMES.length] as string, [
          { target: `t${i % 11}`, type: "knows" },
          { target: NAMES[(i * 3) % NAMES.length] as string, type: "owns" },
        ]),
      ),
    );
    const expected = await recount(engine, agentId);
    expect(await stats(agentId)).toEqual(expected);
    const totals = (await trigger("state::get", { scope: statsScope(agentId), key: "graph" })) as {
      entities: number;
      relations: number;
    };
    expect([totals.entities, totals.relations]).toEqual([expected.totalEntities, expected.totalRelations]);
    expect(await restarted(agentId)).toEqual(expected);
  }, 60_000);

  it("stays exact when a process may mirror fewer entities than its graphs hold (least recently asked forgotten)", async () => {
    const small = new GraphStats(
      stateClient((r) => engine.trigger(r)),
      5,
    );
    const graphs = [await newAgent(), await newAgent(), await newAgent()];
    for (const [index, agentId] of graphs.entries()) {
      for (const name of NAMES.slice(0, 3 + index))
        await add(agentId, name, [{ target: "hub", type: "knows" }]);
    }
    for (let round = 0; round < 2; round++) {
      for (const agentId of graphs)
        expect(await small.stats(agentId)).toEqual(await recount(engine, agentId));
    }
  }, 60_000);

  it("lets other work run while it rebuilds a large graph's components from the heads", async () => {
    const agentId = await newAgent();
    for (let i = 0; i < 25; i++) {
      await add(
        agentId,
        `s${i}`,
        Array.from({ length: 200 }, (_, k) => ({ target: `t${i}-${k}`, type: "knows" })),
      );
    }
    // A timer set before the rebuild: it fires only if the rebuild hands the event loop over.
    let ran = false;
    const timer = setTimeout(() => {
      ran = true;
    }, 0);
    const answer = await restarted(agentId);
    clearTimeout(timer);
    expect(answer).toMatchObject({ totalEntities: 5025, totalRelations: 5000 });
    expect(ran).toBe(true);
  }, 60_000);

  it("counts a graph written before the totals once, then keeps counting", async () => {
    const agentId = await newAgent();
    await add(agentId, "a", [{ target: "b", type: "knows" }]);
    await add(agentId, "c", [{ target: "d", type: "knows" }]);
    await add(agentId, "a", [{ target: "c", type: "owns" }]);
    // The code before the totals wrote heads, versions and the incoming index, and nothing else.
    await trigger("state::delete", { scope: statsScope(agentId), key: "graph" });
    expect(await restarted(agentId)).toEqual(await recount(engine, agentId));
    await trigger("state::delete", { scope: statsScope(agentId), key: "graph" });
    expect(await stats(agentId)).toEqual({
      totalEntities: 4,
      totalRelations: 2,
      avgDegree: 1,
      connectedComponents: 2,
    });
    await trigger("state::delete", { scope: statsScope(agentId), key: "graph" });
    await add(agentId, "b", [{ target: "d", type: "knows" }]);
    expect(await stats(agentId)).toEqual({
      totalEntities: 4,
      totalRelations: 3,
      avgDegree: 1.5,
      connectedComponents: 1,
    });
    expect(await restarted(agentId)).toEqual(await recount(engine, agentId));
  }, 60_000);
});
