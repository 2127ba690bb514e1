import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../../src/shared/clock.ts";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;
let realmId: string;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  realmId = await newRealm(server, "kg-inverse");
  key = await realmKey(server, realmId);
});
afterAll(async () => {
  setClock(null);
  await server.close();
});

const kg = (name: string, body: Record<string, unknown>, as = key) =>
  call(server, "POST", `/api/kg/${name}`, body, as);

type Version = { entity: string; version: number; relations: Array<{ target: string; type: string }> };

describe("inverse relations on the target (spec: `inverse:<type>` on each target)", () => {
  it("shows B's inverse:works_at towards A in kg::query once A relates to B, and drops it with the relation", async () => {
    const agentId = await createAgent(server, realmId);
    await kg("add", {
      agentId,
      entity: "acme",
      type: "company",
      relations: [{ target: "berlin", type: "based_in" }],
    });
    await kg("add", {
      agentId,
      entity: "bob",
      type: "person",
      relations: [{ target: "acme", type: "works_at" }],
    });
    const acme = await kg("query", { agentId, entity: "acme", depth: 0 });
    expect(acme.status).toBe(200);
    expect(acme.body).toEqual([
      expect.objectContaining({
        entity: "acme",
        version: 1,
        relations: [
          { target: "berlin", type: "based_in" },
          { target: "bob", type: "inverse:works_at" },
        ],
      }),
    ]);
    // Reached entities carry theirs too; the source keeps only what it stored.
    const reached = (await kg("query", { agentId, entity: "bob", depth: 1 })).body as Version[];
    expect(reached.find((v) => v.entity === "bob")?.relations).toEqual([
      { target: "acme", type: "works_at" },
    ]);
    expect(reached.find((v) => v.entity === "acme")?.relations).toContainEqual({
      target: "bob",
      type: "inverse:works_at",
    });

    // A diagram draws the edge once, from the source's side, not again as its inverse.
    const diagram = (await server.service.engine.trigger({
      function_id: "tool::kg_visualize",
      payload: { agentId, entity: "bob", depth: 1 },
    })) as { mermaid: string };
    expect(diagram.mermaid.split("\n").filter((line) => line.includes("-->"))).toEqual([
      '  n0 -->|"works_at"| n1',
    ]);

    await kg("add", { agentId, entity: "bob", type: "person", relations: [] });
    const after = (await kg("query", { agentId, entity: "acme", depth: 0 })).body as Version[];
    expect(after[0]?.relations).toEqual([{ target: "berlin", type: "based_in" }]);
  });

  it("tells at most 1 000 inverses of a hub many sources point at, each source and type once", async () => {
    const agentId = await createAgent(server, realmId);
    await kg("add", { agentId, entity: "hub", type: "thing", relations: [] });
    // 12 sources × 100 relation types: 1 200 distinct inverses, and each source says each type twice.
    const types = Array.from({ length: 100 }, (_, i) => ({ target: "hub", type: `t${i}` }));
    for (let source = 0; source < 12; source++) {
      const added = await kg("add", {
        agentId,
        entity: `s${source}`,
        type: "thing",
        relations: [...types, ...types],
      });
      expect(added.status, JSON.stringify(added.body)).toBeLessThan(300);
    }
    const [hub] = (await kg("query", { agentId, entity: "hub", depth: 0 })).body as Version[];
    const inverses = hub?.relations ?? [];
    expect(inverses).toHaveLength(1000);
    expect(new Set(inverses.map((r) => `${r.target}/${r.type}`)).size).toBe(1000);
    expect(inverses[0]).toEqual({ target: "s0", type: "inverse:t0" });
  });

  it("shows in kg::timeline, per version, the inverses of relations held while that version was valid", async () => {
    const agentId = await createAgent(server, realmId);
    let now = 1_000_000;
    setClock({ now: () => now });
    try {
      await kg("add", { agentId, entity: "acme", type: "company" }); // acme v1 [1.000.000, 1.000.300)
      now += 100;
      await kg("add", {
        agentId,
        entity: "bob",
        type: "person",
        relations: [{ target: "acme", type: "works_at" }],
      });
      now += 100;
      // A diagram draws the edge once, from the source's side, not again as its inverse.
      const diagram = (await server.service.engine.trigger({
        function_id: "tool::kg_visualize",
        payload: { agentId, entity: "bob", depth: 1 },
      })) as { mermaid: string };
      expect(diagram.mermaid.split("\n").filter((line) => line.includes("-->"))).toEqual([
        '  n0 -->|"works_at"| n1',
      ]);

      await kg("add", { agentId, entity: "bob", type: "person", relations: [] }); // bob leaves acme
      now += 100;
      await kg("add", { agentId, entity: "acme", type: "company", properties: { size: 2 } }); // acme v2
      now += 100;
      await kg("add", {
        agentId,
        entity: "carol",
        type: "person",
        relations: [{ target: "acme", type: "owns" }],
      });
    } finally {
      setClock(null);
    }
    const history = await kg("timeline", { agentId, entity: "acme" });
    expect(history.status).toBe(200);
    expect(history.body.map((v: Version) => [v.version, v.relations])).toEqual([
      [1, [{ target: "bob", type: "inverse:works_at" }]],
      [2, [{ target: "carol", type: "inverse:owns" }]],
    ]);
    // The stored history is unchanged: diff compares what the entity itself holds.
    const diff = await kg("diff", { agentId, entity: "acme", timestamp1: 1_000_050, timestamp2: 1_000_350 });
    expect(diff.body.added.filter((change: { relation?: unknown }) => change.relation)).toEqual([]);
  });

  it("shows only the agent's own graph's inverses: another realm's agent relating to the same name adds none", async () => {
    const mine = await createAgent(server, realmId);
    const otherRealm = await newRealm(server, "kg-inverse-other");
    const theirs = await createAgent(server, otherRealm);
    await kg("add", { agentId: mine, entity: "acme", type: "company" });
    await kg("add", {
      agentId: mine,
      entity: "bob",
      type: "person",
      relations: [{ target: "acme", type: "works_at" }],
    });
    const added = await call(server, "POST", "/api/kg/add", {
      agentId: theirs,
      entity: "eve",
      type: "person",
      relations: [{ target: "acme", type: "works_at" }],
    });
    expect(added.status).toBe(201);
    const only = [{ target: "bob", type: "inverse:works_at" }];
    const acme = (await kg("query", { agentId: mine, entity: "acme", depth: 0 })).body as Version[];
    expect(acme[0]?.relations).toEqual(only);
    const timeline = await kg("timeline", { agentId: mine, entity: "acme" });
    expect(timeline.body[0].relations).toEqual(only);
    // The other realm's key cannot read this graph at all.
    const otherKey = await realmKey(server, otherRealm);
    expect((await kg("timeline", { agentId: mine, entity: "acme" }, otherKey)).status).toBe(404);
  });
});
