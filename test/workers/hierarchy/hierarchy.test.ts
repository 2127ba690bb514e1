import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { archiveRealm, call, markRealmDeleting, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";
import * as org from "./fixtures.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const realmWith = (...names: string[]) => org.realmWith(server, ...names);
const set = (body: Record<string, unknown>, key?: string) => org.setNode(server, body, key);
const place = (realmId: string, agentId: string, fields: Record<string, unknown> = {}) =>
  org.place(server, realmId, agentId, fields);

describe("hierarchy set", () => {
  it("creates a node with defaults and merges later sets into it", async () => {
    const { realmId, ids } = await realmWith("boss", "dev");
    expect(await place(realmId, ids.boss)).toEqual({
      realmId,
      agentId: ids.boss,
      reportsTo: null,
      title: "",
      capabilities: [],
      rank: 1,
    });
    await place(realmId, ids.dev, { reportsTo: ids.boss, title: "Dev", capabilities: ["code"], rank: 2 });
    const merged = await place(realmId, ids.dev, { title: "Lead dev" });
    expect(merged).toEqual({
      realmId,
      agentId: ids.dev,
      reportsTo: ids.boss,
      title: "Lead dev",
      capabilities: ["code"],
      rank: 2,
    });
    expect((await place(realmId, ids.dev, { reportsTo: null })).reportsTo).toBeNull();
  });

  it("refuses self-report, a manager outside the chart and a cycle with 400", async () => {
    const { realmId, ids } = await realmWith("a", "b", "c", "outsider");
    await place(realmId, ids.a);
    await place(realmId, ids.b, { reportsTo: ids.a });
    await place(realmId, ids.c, { reportsTo: ids.b });
    expect(await set({ realmId, agentId: ids.a, reportsTo: ids.a })).toEqual({
      status: 400,
      body: { error: "agent cannot report to itself" },
    });
    expect(await set({ realmId, agentId: ids.a, reportsTo: ids.outsider })).toEqual({
      status: 400,
      body: { error: `manager ${ids.outsider} is not in the hierarchy of realm ${realmId}` },
    });
    expect(await set({ realmId, agentId: ids.a, reportsTo: ids.c })).toEqual({
      status: 400,
      body: { error: `cycle detected in hierarchy: ${ids.a} -> ${ids.c} -> ${ids.b} -> ${ids.a}` },
    });
    const chain = await call(server, "GET", `/api/hierarchy/${realmId}/chain/${ids.a}`);
    expect(chain.body.chain).toHaveLength(1);
  });

  it("refuses another realm's agent with 404, and takes an id no worker knows (opaque ids)", async () => {
    const { realmId } = await realmWith();
    const other = await realmWith("stranger");
    const agentId = other.ids.stranger as string;
    expect(await set({ realmId, agentId })).toEqual({
      status: 404,
      body: { error: `Agent ${agentId} not found in realm ${realmId}` },
    });
    expect((await set({ realmId, agentId: "external-runtime-agent" })).status).toBe(200);
  });

  it.each([
    [{ agentId: "a" }, "realmId"],
    [{ realmId: "r" }, "agentId"],
    [{ realmId: "r", agentId: "a", rank: -1 }, "rank"],
    [{ realmId: "r", agentId: "a", rank: 1.5 }, "rank"],
    [{ realmId: "r", agentId: "a", capabilities: "code" }, "capabilities"],
    [{ realmId: "r", agentId: "a", capabilities: [""] }, "capabilities"],
    [{ realmId: "r", agentId: "a", boss: "b" }, "boss"],
  ])("refuses %j with 400 naming %s", async (body, field) => {
    const response = await set(body);
    expect(response.status).toBe(400);
    expect(response.body.error).toContain(field);
  });

  it("lets exactly one of two simultaneous sets that would jointly form a cycle succeed", async () => {
    const { realmId, ids } = await realmWith("a", "b");
    await place(realmId, ids.a);
    await place(realmId, ids.b);
    const results = await Promise.all([
      set({ realmId, agentId: ids.a, reportsTo: ids.b }),
      set({ realmId, agentId: ids.b, reportsTo: ids.a }),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual([200, 400]);
    expect(results.find((result) => result.status === 400)?.body.error).toMatch(
      /^cycle detected in hierarchy: /,
    );
    const tree = await call(server, "GET", `/api/hierarchy/${realmId}/tree`);
    expect(tree.body.roots).toHaveLength(1);
    expect(tree.body.roots[0].reports).toHaveLength(1);
  });
});

describe("hierarchy delete and purge", () => {
  it("re-parents a deleted node's reports to its manager, and a root's reports become roots", async () => {
    const { realmId, ids } = await realmWith("a", "b", "c", "d");
    await place(realmId, ids.a);
    await place(realmId, ids.b, { reportsTo: ids.a });
    await place(realmId, ids.c, { reportsTo: ids.b });
    await place(realmId, ids.d, { reportsTo: ids.b });
    expect(await call(server, "DELETE", `/api/hierarchy/${realmId}/${ids.b}`)).toEqual({
      status: 200,
      body: { deleted: true },
    });
    const chain = await call(server, "GET", `/api/hierarchy/${realmId}/chain/${ids.c}`);
    expect(chain.body.chain.map((node: { agentId: string }) => node.agentId)).toEqual([ids.c, ids.a]);
    await call(server, "DELETE", `/api/hierarchy/${realmId}/${ids.a}`);
    const tree = await call(server, "GET", `/api/hierarchy/${realmId}/tree`);
    expect(tree.body.roots.map((root: { agentId: string }) => root.agentId)).toEqual([ids.c, ids.d].sort());
    expect(await call(server, "DELETE", `/api/hierarchy/${realmId}/${ids.b}`)).toEqual({
      status: 404,
      body: { error: `Agent ${ids.b} is not in the hierarchy of realm ${realmId}` },
    });
  });

  it("purges a realm's chart idempotently and leaves other realms alone", async () => {
    const { realmId, ids } = await realmWith("a");
    const other = await realmWith("b");
    await place(realmId, ids.a);
    await place(other.realmId, other.ids.b);
    const purge = () =>
      server.service.engine.trigger({ function_id: "hierarchy::purge_realm", payload: { realmId } });
    expect(await purge()).toEqual({ purged: true });
    expect(await purge()).toEqual({ purged: false });
    expect((await call(server, "GET", `/api/hierarchy/${realmId}/tree`)).body).toEqual({ roots: [] });
    expect((await call(server, "GET", `/api/hierarchy/${other.realmId}/tree`)).body.roots).toHaveLength(1);
  });
});

describe("hierarchy realm isolation", () => {
  it("lets a realm-bound key use its own realm and finds nothing on any route of another (404)", async () => {
    const mine = await realmWith("me");
    const theirs = await realmWith("them");
    await place(theirs.realmId, theirs.ids.them);
    const key = await realmKey(server, mine.realmId);
    expect((await set({ realmId: mine.realmId, agentId: mine.ids.me }, key)).status).toBe(200);
    expect((await call(server, "GET", `/api/hierarchy/${mine.realmId}/tree`, undefined, key)).status).toBe(
      200,
    );
    const r = theirs.realmId;
    const attempts: Array<[string, string, unknown?]> = [
      ["POST", "/api/hierarchy", { realmId: r, agentId: theirs.ids.them, title: "Hijacked" }],
      ["GET", `/api/hierarchy/${r}/tree`],
      ["GET", `/api/hierarchy/${r}/find?capability=x`],
      ["GET", `/api/hierarchy/${r}/chain/${theirs.ids.them}`],
      ["DELETE", `/api/hierarchy/${r}/${theirs.ids.them}`],
    ];
    for (const [method, path, body] of attempts) {
      const response = await call(server, method, path, body, key);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error).toContain(`Realm ${r} not found`);
    }
    const chain = await call(server, "GET", `/api/hierarchy/${r}/chain/${theirs.ids.them}`);
    expect(chain.body.chain[0].title).toBe("");
  });
});

describe("hierarchy realm checks (with the realm worker)", () => {
  it("answers 404 for an unknown realm and 409 for writes to an archived one", async () => {
    const unknown = "realm-does-not-exist";
    for (const path of ["tree", "find?capability=x", "chain/agent-x"]) {
      expect((await call(server, "GET", `/api/hierarchy/${unknown}/${path}`)).status, path).toBe(404);
    }
    expect((await set({ realmId: unknown, agentId: "agent-x" })).status).toBe(404);
    expect((await call(server, "DELETE", `/api/hierarchy/${unknown}/agent-x`)).status).toBe(404);

    const { realmId, ids } = await realmWith("a");
    await place(realmId, ids.a);
    await archiveRealm(server, realmId);
    const error = `Realm ${realmId} is archived and read-only`;
    expect(await set({ realmId, agentId: ids.a, title: "After" })).toEqual({ status: 409, body: { error } });
    expect(await call(server, "DELETE", `/api/hierarchy/${realmId}/${ids.a}`)).toEqual({
      status: 409,
      body: { error },
    });
    expect((await call(server, "GET", `/api/hierarchy/${realmId}/tree`)).body.roots).toHaveLength(1);
  });

  it("refuses sets and deletes (409) in a realm being deleted", async () => {
    const { realmId, ids } = await realmWith("a", "b");
    await place(realmId, ids.a);
    await markRealmDeleting(server, realmId);
    const error = `Realm ${realmId} is being deleted`;
    expect(await set({ realmId, agentId: ids.b, reportsTo: ids.a })).toEqual({
      status: 409,
      body: { error },
    });
    expect(await call(server, "DELETE", `/api/hierarchy/${realmId}/${ids.a}`)).toEqual({
      status: 409,
      body: { error },
    });
    expect((await call(server, "GET", `/api/hierarchy/${realmId}/tree`)).body.roots).toHaveLength(1);
  });
});

describe("hierarchy purges are internal cascade steps", () => {
  it("refuses purge_realm and purge_agent to a realm-bound caller (403), even for its own realm", async () => {
    const { realmId, ids } = await realmWith("a");
    await place(realmId, ids.a);
    const auth = { kind: "realm" as const, realmId, keyId: "k" };
    for (const [function_id, payload] of [
      ["hierarchy::purge_realm", { realmId }],
      ["hierarchy::purge_agent", { realmId, agentId: ids.a }],
    ] as const) {
      await expect(
        server.service.engine.trigger({ function_id, payload, auth }),
        function_id,
      ).rejects.toMatchObject({ status: 403 });
    }
    expect((await call(server, "GET", `/api/hierarchy/${realmId}/tree`)).body.roots).toHaveLength(1);
  });
});
