import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_DEPTH } from "../../../src/workers/hierarchy/chart.ts";
import { call } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";
import * as org from "./fixtures.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const realmWith = (...names: string[]) => org.realmWith(server, ...names);
const place = (realmId: string, agentId: string, fields: Record<string, unknown> = {}) =>
  org.place(server, realmId, agentId, fields);

describe("hierarchy reads", () => {
  /** ceo ← (cto rank 1, cfo rank 2); cto ← (dev2 rank 1, dev1 rank 1, intern rank 3); and a second root. */
  async function company() {
    const org = await realmWith("ceo", "cto", "cfo", "dev1", "dev2", "intern", "advisor");
    const { realmId, ids } = org;
    await place(realmId, ids.ceo, { title: "CEO", rank: 0 });
    await place(realmId, ids.cfo, { reportsTo: ids.ceo, rank: 2, capabilities: ["Finance"] });
    await place(realmId, ids.cto, { reportsTo: ids.ceo, rank: 1, capabilities: ["code", "Architecture"] });
    await place(realmId, ids.intern, { reportsTo: ids.cto, rank: 3, capabilities: ["CODE-review"] });
    await place(realmId, ids.dev2, { reportsTo: ids.cto, rank: 1, capabilities: ["Code"] });
    await place(realmId, ids.dev1, { reportsTo: ids.cto, rank: 1, capabilities: ["code"] });
    await place(realmId, ids.advisor, { rank: 5 });
    return org;
  }

  const names = (ids: Record<string, string>, agentIds: string[]) =>
    agentIds.map((agentId) => Object.keys(ids).find((name) => ids[name] === agentId));

  it("nests the tree by manager with reports ordered by rank, then agentId", async () => {
    const { realmId, ids } = await company();
    const { status, body } = await call(server, "GET", `/api/hierarchy/${realmId}/tree`);
    expect(status).toBe(200);
    expect(
      names(
        ids,
        body.roots.map((root: { agentId: string }) => root.agentId),
      ),
    ).toEqual(["ceo", "advisor"]);
    const [ceo] = body.roots;
    expect(ceo).toMatchObject({ agentId: ids.ceo, title: "CEO", capabilities: [], rank: 0 });
    expect(
      names(
        ids,
        ceo.reports.map((node: { agentId: string }) => node.agentId),
      ),
    ).toEqual(["cto", "cfo"]);
    const devs = [ids.dev1, ids.dev2].sort();
    expect(ceo.reports[0].reports.map((node: { agentId: string }) => node.agentId)).toEqual([
      ...devs,
      ids.intern,
    ]);
    expect(ceo.reports[0].reports[2]).toEqual({
      agentId: ids.intern,
      title: "",
      capabilities: ["CODE-review"],
      rank: 3,
      reports: [],
    });
  });

  it("returns one subtree for rootAgentId, 404 when that agent is not in the chart, and no roots for an empty chart", async () => {
    const { realmId, ids } = await company();
    const subtree = await call(server, "GET", `/api/hierarchy/${realmId}/tree?rootAgentId=${ids.cto}`);
    expect(subtree.body.roots).toHaveLength(1);
    expect(subtree.body.roots[0].agentId).toBe(ids.cto);
    expect(subtree.body.roots[0].reports).toHaveLength(3);
    const missing = await call(server, "GET", `/api/hierarchy/${realmId}/tree?rootAgentId=agent-nobody`);
    expect(missing).toEqual({
      status: 404,
      body: { error: `Agent agent-nobody is not in the hierarchy of realm ${realmId}` },
    });
    const empty = await realmWith();
    expect((await call(server, "GET", `/api/hierarchy/${empty.realmId}/tree`)).body).toEqual({ roots: [] });
  });

  it("finds capabilities whole and in any case, ordered by rank, then agentId", async () => {
    const { realmId, ids } = await company();
    const { status, body } = await call(server, "GET", `/api/hierarchy/${realmId}/find?capability=CODE`);
    expect(status).toBe(200);
    expect(body.count).toBe(3);
    // All three hold rank 1, so agentId decides.
    expect(body.matches.map((node: { agentId: string }) => node.agentId)).toEqual(
      [ids.cto, ids.dev1, ids.dev2].sort(),
    );
    expect(body.matches.find((node: { agentId: string }) => node.agentId === ids.cto)).toMatchObject({
      realmId,
      reportsTo: ids.ceo,
      capabilities: ["code", "Architecture"],
    });
    const none = await call(server, "GET", `/api/hierarchy/${realmId}/find?capability=cod`);
    expect(none.body).toEqual({ matches: [], count: 0 });
    const missing = await call(server, "GET", `/api/hierarchy/${realmId}/find`);
    expect(missing.status).toBe(400);
    expect(missing.body.error).toContain("capability is required");
  });

  it("gives an agent's chain of command up to its root, and an empty chain outside the chart", async () => {
    const { realmId, ids } = await company();
    const { body } = await call(server, "GET", `/api/hierarchy/${realmId}/chain/${ids.intern}`);
    expect(
      names(
        ids,
        body.chain.map((node: { agentId: string }) => node.agentId),
      ),
    ).toEqual(["intern", "cto", "ceo"]);
    expect(body.chain[0]).toEqual({
      realmId,
      agentId: ids.intern,
      reportsTo: ids.cto,
      title: "",
      capabilities: ["CODE-review"],
      rank: 3,
    });
    const outside = await call(server, "GET", `/api/hierarchy/${realmId}/chain/agent-nobody`);
    expect(outside).toEqual({ status: 200, body: { chain: [] } });
  });

  it("refuses a set past the deepest chain of command, and answers the tree of the deepest chart", async () => {
    const { realmId } = await realmWith();
    // Opaque ids (no agent of this service): what a key may place without limit of agents.
    for (let i = 0; i < MAX_DEPTH; i++) await place(realmId, `n${i}`, { reportsTo: i ? `n${i - 1}` : null });
    const deeper = await org.setNode(server, { realmId, agentId: "deeper", reportsTo: `n${MAX_DEPTH - 1}` });
    expect(deeper.status).toBe(400);
    expect(deeper.body.error).toContain(`at most ${MAX_DEPTH} deep`);
    const tree = await call(server, "GET", `/api/hierarchy/${realmId}/tree`);
    expect(tree.status).toBe(200);
    let depth = 0;
    for (let node = tree.body.roots[0]; node; node = node.reports[0]) depth++;
    expect(depth).toBe(MAX_DEPTH);
  });

  it("still shows every node once when the stored chart was broken by hand", async () => {
    const { realmId, ids } = await company();
    const chart = (await server.service.engine.trigger({
      function_id: "state::get",
      payload: { scope: "hierarchy", key: realmId },
    })) as { nodes: Record<string, { reportsTo: string | null }> };
    chart.nodes[ids.ceo].reportsTo = ids.dev1;
    chart.nodes[ids.advisor].reportsTo = "agent-gone";
    await server.service.engine.trigger({
      function_id: "state::set",
      payload: { scope: "hierarchy", key: realmId, value: chart },
    });
    const { body } = await call(server, "GET", `/api/hierarchy/${realmId}/tree`);
    const all = (nodes: Array<{ agentId: string; reports: unknown[] }>): string[] =>
      nodes.flatMap((node) => [node.agentId, ...all(node.reports as typeof nodes)]);
    expect(all(body.roots).sort()).toEqual(Object.values(ids).sort());
    const chain = await call(server, "GET", `/api/hierarchy/${realmId}/chain/${ids.dev1}`);
    expect(chain.body.chain).toHaveLength(3);
  });
});
