import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
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

describe("a wide add", () => {
  it("takes 200 relations to entities not yet in the graph in one add, each found from its target", async () => {
    const agentId = await graph();
    const relations = Array.from({ length: 200 }, (_, i) => ({ target: `new-${i}`, type: "knows" }));
    const added = await kg("add", { agentId, entity: "hub", type: "t", relations });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect((await kg("stats", { agentId })).body).toMatchObject({ totalEntities: 201, totalRelations: 200 });
    const back = await kg("traverse", {
      agentId,
      startEntity: "new-199",
      direction: "incoming",
      maxDepth: 1,
    });
    expect(back.body.adjacency["new-199"]).toEqual(["hub"]);
  });
});

describe("a long history", () => {
  it("refuses properties of more than 64 KiB as JSON with 400", async () => {
    const agentId = await graph();
    const big = await kg("add", {
      agentId,
      entity: "e",
      type: "t",
      properties: { blob: "x".repeat(70_000) },
    });
    expect(big.status).toBe(400);
    expect(big.body.error).toContain("properties must be at most 65536 bytes");
    const fits = await kg("add", {
      agentId,
      entity: "e",
      type: "t",
      properties: { blob: "x".repeat(60_000) },
    });
    expect(fits.status).toBe(201);
  });

  it("reads at most 500 versions of an entity: timeline keeps the latest, diff and time ranges read by key", async () => {
    const agentId = await graph();
    const engine = server.service.engine;
    const added: Array<{ version: number; validFrom: number }> = [];
    for (let i = 1; i <= 520; i++) {
      added.push(
        (await engine.trigger({
          function_id: "kg::add_temporal",
          payload: { agentId, entity: "busy", type: "t", properties: { i } },
        })) as { version: number; validFrom: number },
      );
    }
    // Every record the state store hands out during one request.
    const trigger = engine.trigger.bind(engine);
    let read = 0;
    const spy = vi.spyOn(engine, "trigger").mockImplementation(async (request) => {
      const answer = await trigger(request);
      if (request.function_id === "state::list") read += (answer as { items: unknown[] }).items.length;
      if (request.function_id === "state::get" && answer !== null) read++;
      return answer;
    });
    try {
      const history = await kg("timeline", { agentId, entity: "busy" });
      expect(history.body).toHaveLength(500);
      expect(history.body[0].version).toBe(21);
      expect(history.body.at(-1).version).toBe(520);
      read = 0;
      const last = added.at(-1) as { validFrom: number };
      const changed = await kg("diff", {
        agentId,
        entity: "busy",
        timestamp1: (added[9] as { validFrom: number }).validFrom,
        timestamp2: last.validFrom,
      });
      expect(changed.body).toMatchObject({ fromVersion: 10, toVersion: 520 });
      expect(read).toBeLessThan(50);
      read = 0;
      const lately = await kg("query", {
        agentId,
        entity: "busy",
        depth: 0,
        timeRange: { from: last.validFrom, to: last.validFrom },
      });
      // Version 519 closed as 520 began: its validUntil is `from`, which overlaps (DESIGN §6).
      expect(lately.body.map((version: { version: number }) => version.version)).toEqual([519, 520]);
      expect(read).toBeLessThan(50);
    } finally {
      spy.mockRestore();
    }
  });
});

describe("a hub", () => {
  it("is read up to 1 000 of the entities pointing at it by a query or traversal, not all of them", async () => {
    const agentId = await graph();
    const engine = server.service.engine;
    for (let i = 0; i < 3000; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) =>
          engine.trigger({
            function_id: "kg::add_temporal",
            payload: { agentId, entity: `e${i + j}`, type: "t", relations: [{ target: "hub", type: "in" }] },
          }),
        ),
      );
    }
    const trigger = engine.trigger.bind(engine);
    let reads = 0;
    const spy = vi.spyOn(engine, "trigger").mockImplementation(async (request) => {
      if (request.function_id === "state::get") reads++;
      return trigger(request);
    });
    try {
      const around = await kg("query", { agentId, entity: "hub", depth: 1 });
      expect(around.body).toHaveLength(500);
      expect(reads).toBeLessThan(4000);
      reads = 0;
      const traversal = await kg("traverse", { agentId, startEntity: "hub", maxDepth: 1, maxNodes: 1 });
      expect(traversal.body.nodeCount).toBe(1);
      expect(traversal.body.adjacency.hub).toHaveLength(1000);
      expect(reads).toBeLessThan(1100);
    } finally {
      spy.mockRestore();
    }
  });
});
