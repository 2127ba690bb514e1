import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../../src/shared/clock.ts";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;
let realmId: string;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  realmId = await newRealm(server, "kg");
  key = await realmKey(server, realmId);
});
afterAll(async () => {
  setClock(null);
  await server.close();
});

const kg = (name: string, body: Record<string, unknown>, as = key) =>
  call(server, "POST", `/api/kg/${name}`, body, as);

async function graph() {
  return createAgent(server, realmId);
}

describe("the knowledge graph", () => {
  it("versions an entity: the first add is 1, each add the next, the old one closed and still readable", async () => {
    const agentId = await graph();
    let now = 1_000_000;
    setClock({ now: () => now });
    try {
      const first = await kg("add", {
        agentId,
        entity: "alice",
        type: "person",
        properties: { role: "dev" },
      });
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      expect(first.body).toMatchObject({ version: 1, validFrom: 1_000_000, validUntil: null });
      now = 2_000_000;
      const second = await kg("add", {
        agentId,
        entity: "alice",
        type: "person",
        properties: { role: "lead" },
      });
      expect(second.body).toMatchObject({ version: 2, validFrom: 2_000_000, validUntil: null });
      const history = await kg("timeline", { agentId, entity: "alice" });
      expect(
        history.body.map((v: { version: number; validUntil: number | null }) => [v.version, v.validUntil]),
      ).toEqual([
        [1, 2_000_000],
        [2, null],
      ]);
      const then = await kg("query", {
        agentId,
        entity: "alice",
        depth: 0,
        timeRange: { from: 1_500_000, to: 1_600_000 },
      });
      expect(then.body.map((v: { properties: { role: string } }) => v.properties.role)).toEqual(["dev"]);
      // DESIGN §6: validFrom ≤ to and validUntil ≥ from, so at the switch both versions overlap.
      const atSwitch = await kg("query", {
        agentId,
        entity: "alice",
        depth: 0,
        timeRange: { from: 2_000_000, to: 2_000_000 },
      });
      expect(atSwitch.body.map((v: { version: number }) => v.version)).toEqual([1, 2]);
      const changes = await kg("diff", {
        agentId,
        entity: "alice",
        timestamp1: 1_500_000,
        timestamp2: 2_500_000,
      });
      expect(changes.body).toMatchObject({
        fromVersion: 1,
        toVersion: 2,
        added: [],
        removed: [],
        modified: [{ property: "role", before: "dev", after: "lead" }],
      });
    } finally {
      setClock(null);
    }
  });

  it("adds inverse relations, takes them away with the relation, and makes stubs of missing targets", async () => {
    const agentId = await graph();
    await kg("add", { agentId, entity: "acme", type: "company" });
    await kg("add", {
      agentId,
      entity: "bob",
      type: "person",
      relations: [
        { target: "acme", type: "works_at" },
        { target: "paris", type: "lives_in" },
      ],
    });
    const fromAcme = await kg("traverse", {
      agentId,
      startEntity: "acme",
      direction: "incoming",
      maxDepth: 1,
    });
    expect(fromAcme.body).toMatchObject({
      adjacency: { acme: ["bob"] },
      paths: { bob: ["acme", "bob"] },
      nodeCount: 2,
    });
    const reached = await kg("query", { agentId, entity: "acme", depth: 1 });
    expect(reached.body.map((v: { entity: string }) => v.entity)).toEqual(["acme", "bob"]);
    expect((await kg("stats", { agentId })).body).toEqual({
      totalEntities: 3,
      totalRelations: 2,
      avgDegree: 1.333,
      connectedComponents: 1,
    });
    await kg("add", {
      agentId,
      entity: "bob",
      type: "person",
      relations: [{ target: "paris", type: "lives_in" }],
    });
    const after = await kg("traverse", { agentId, startEntity: "acme", direction: "incoming", maxDepth: 1 });
    expect(after.body).toMatchObject({ adjacency: { acme: [] }, nodeCount: 1 });
    expect((await kg("stats", { agentId })).body).toMatchObject({
      totalRelations: 1,
      connectedComponents: 2,
    });
    const filtered = await kg("query", { agentId, entity: "paris", depth: 2, relationFilter: ["works_at"] });
    expect(filtered.body).toEqual([]);
  });

  it("answers unknown entities with nothing, and refuses limits out of range naming them", async () => {
    const agentId = await graph();
    expect((await kg("query", { agentId, entity: "nobody" })).body).toEqual([]);
    expect((await kg("traverse", { agentId, startEntity: "nobody" })).body).toEqual({
      adjacency: {},
      paths: {},
      nodeCount: 0,
    });
    const deep = await kg("query", { agentId, entity: "x", depth: 11 });
    expect(deep.status).toBe(400);
    expect(deep.body.error).toContain("depth must be at most 10");
    expect((await kg("traverse", { agentId, startEntity: "x", maxNodes: 501 })).body.error).toContain(
      "maxNodes must be at most 500",
    );
    expect((await kg("add", { agentId, entity: "", type: "x" })).status).toBe(400);
  });

  it("keeps each agent's graph to its realm, and deletes it with the agent", async () => {
    const agentId = await graph();
    await kg("add", { agentId, entity: "secret", type: "note" });
    const otherKey = await realmKey(server, await newRealm(server, "other"));
    const attempts: Array<[string, Record<string, unknown>]> = [
      ["query", { agentId, entity: "secret" }],
      ["stats", { agentId }],
      ["timeline", { agentId, entity: "secret" }],
      ["add", { agentId, entity: "secret", type: "x" }],
    ];
    for (const [name, body] of attempts) {
      const refused = await kg(name, body, otherKey);
      expect(refused.status, name).toBeGreaterThanOrEqual(403);
      expect(JSON.stringify(refused.body)).not.toContain("note");
    }
    expect((await call(server, "DELETE", `/api/agents/${agentId}`)).status).toBe(204);
    const leftovers = await server.service.engine.trigger({
      function_id: "state::list",
      payload: { scope: `kg_heads:${agentId}` },
    });
    expect((leftovers as { items: unknown[] }).items).toEqual([]);
  });

  it("goes with its realm", async () => {
    const doomed = await newRealm(server, "doomed");
    const agentId = await createAgent(server, doomed, { name: "g" });
    await call(server, "POST", "/api/kg/add", { agentId, entity: "e", type: "t" });
    expect((await call(server, "DELETE", `/api/realms/${doomed}`)).status).toBe(200);
    const leftovers = await server.service.engine.trigger({
      function_id: "state::list",
      payload: { scope: `kg_heads:${agentId}` },
    });
    expect((leftovers as { items: unknown[] }).items).toEqual([]);
  });
});
