import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../../src/shared/clock.ts";
import { call, createAgent, newRealm, recordTopic } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";
import { createDirective } from "./fixtures.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());
afterEach(() => setClock(null));

const create = (body: Record<string, unknown>, key?: string) => createDirective(server, body, key);
const post = (body: Record<string, unknown>) => call(server, "POST", "/api/directives", body);

describe("directive create and get", () => {
  it("creates an Active directive at version 1, announces it, and reads it back", async () => {
    const events = recordTopic(server, "directive.lifecycle");
    const realmId = await newRealm(server);
    const directive = await create({
      realmId,
      title: "Grow revenue",
      level: "realm",
      description: "10% this year",
      priority: "high",
    });
    expect(directive).toMatchObject({
      realmId,
      title: "Grow revenue",
      description: "10% this year",
      level: "realm",
      priority: "high",
      status: "Active",
      version: 1,
    });
    expect(directive.id).toMatch(/^dir-[0-9a-f-]{36}$/);
    expect(directive.createdAt).toBe(directive.updatedAt);
    expect(directive).not.toHaveProperty("parentId");
    await expect.poll(() => events.length).toBe(1);
    expect(events[0]).toEqual({ type: "created", directiveId: directive.id, realmId });
    const read = await call(server, "GET", `/api/directives/${realmId}/${directive.id}`);
    expect(read).toEqual({ status: 200, body: directive });
  });

  it("accepts a parent and an owner of the same realm", async () => {
    const realmId = await newRealm(server);
    const owner = await createAgent(server, realmId, { name: "owner" });
    const parent = await create({ realmId, title: "Parent", level: "realm" });
    const child = await create({
      realmId,
      title: "Child",
      level: "team",
      parentId: parent.id,
      ownerAgentId: owner,
    });
    expect(child).toMatchObject({ parentId: parent.id, ownerAgentId: owner });
  });

  it("refuses a parent that is missing or belongs to another realm with 400", async () => {
    const realmId = await newRealm(server);
    const other = await newRealm(server);
    const foreign = await create({ realmId: other, title: "Elsewhere", level: "realm" });
    for (const parentId of ["dir-missing", foreign.id]) {
      const response = await post({ realmId, title: "Orphan", level: "team", parentId });
      expect(response).toEqual({
        status: 400,
        body: { error: `parent directive ${parentId} not found in realm ${realmId}` },
      });
    }
  });

  it("refuses an owner that is another realm's agent with 404, and takes an id no worker knows", async () => {
    const realmId = await newRealm(server);
    const other = await newRealm(server);
    const outsider = await createAgent(server, other, { name: "outsider" });
    const response = await post({ realmId, title: "Owned", level: "agent", ownerAgentId: outsider });
    expect(response).toEqual({
      status: 404,
      body: { error: `Agent ${outsider} not found in realm ${realmId}` },
    });
    const external = await post({ realmId, title: "Owned", level: "agent", ownerAgentId: "agent-elsewhere" });
    expect(external.status).toBe(201);
  });

  it.each([
    [{ title: "x", level: "realm" }, "realmId"],
    [{ realmId: "r", level: "realm" }, "title"],
    [{ realmId: "r", title: "  ", level: "realm" }, "title"],
    [{ realmId: "r", title: "x" }, "level"],
    [{ realmId: "r", title: "x", level: "mission" }, "level must be one of realm, team, agent"],
    [{ realmId: "r", title: "x", level: "team", priority: "urgent" }, "priority must be one of"],
    [{ realmId: "r", title: "x", level: "team", status: "Paused" }, "status"],
  ])("refuses %j with 400 naming %s", async (body, field) => {
    const response = await post(body);
    expect(response.status).toBe(400);
    expect(response.body.error).toContain(field);
  });

  it("answers 404 for a directive that is missing or in another realm", async () => {
    const realmId = await newRealm(server);
    const other = await newRealm(server);
    const foreign = await create({ realmId: other, title: "Elsewhere", level: "realm" });
    for (const id of ["dir-missing", foreign.id]) {
      const response = await call(server, "GET", `/api/directives/${realmId}/${id}`);
      expect(response).toEqual({
        status: 404,
        body: { error: `Directive ${id} not found in realm ${realmId}` },
      });
    }
  });
});

describe("directive list", () => {
  it("lists a realm's directives oldest first, filtered by level, status (any case) and parentId", async () => {
    let now = Date.parse("2030-01-01T00:00:00Z");
    setClock({ now: () => now++ });
    const realmId = await newRealm(server);
    const root = await create({ realmId, title: "Root", level: "realm" });
    const teamA = await create({ realmId, title: "Team A", level: "team", parentId: root.id });
    const teamB = await create({ realmId, title: "Team B", level: "team", parentId: root.id });
    const agent = await create({ realmId, title: "Agent", level: "agent", parentId: teamA.id });
    await call(server, "PATCH", `/api/directives/${realmId}/${teamB.id}`, { status: "Paused" });
    await create({ realmId: await newRealm(server), title: "Other realm", level: "realm" });

    const ids = async (query: string) => {
      const { status, body } = await call(server, "GET", `/api/directives/${realmId}${query}`);
      expect(status).toBe(200);
      expect(body.count).toBe(body.directives.length);
      return body.directives.map((directive: { id: string }) => directive.id);
    };
    expect(await ids("")).toEqual([root.id, teamA.id, teamB.id, agent.id]);
    expect(await ids("?level=team")).toEqual([teamA.id, teamB.id]);
    expect(await ids("?status=Active")).toEqual([root.id, teamA.id, agent.id]);
    expect(await ids("?status=active")).toEqual([root.id, teamA.id, agent.id]);
    expect(await ids("?status=PAUSED")).toEqual([teamB.id]);
    expect(await ids(`?parentId=${root.id}`)).toEqual([teamA.id, teamB.id]);
    expect(await ids(`?level=team&status=active&parentId=${root.id}`)).toEqual([teamA.id]);
    expect(await ids("?status=Complete")).toEqual([]);
  });

  it.each([
    ["?status=done", "status must be one of Active, Paused, Complete, Cancelled"],
    ["?level=mission", "level must be one of realm, team, agent"],
    ["?owner=x", "owner"],
  ])("refuses the filter %s with 400", async (query, message) => {
    const response = await call(server, "GET", `/api/directives/${await newRealm(server)}${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toContain(message);
  });
});

describe("directive ancestry", () => {
  it("walks from the directive up to its root", async () => {
    const realmId = await newRealm(server);
    const root = await create({ realmId, title: "Root", level: "realm" });
    const team = await create({ realmId, title: "Team", level: "team", parentId: root.id });
    const agent = await create({ realmId, title: "Agent", level: "agent", parentId: team.id });
    const response = await call(server, "GET", `/api/directives/${realmId}/${agent.id}/ancestry`);
    expect(response).toEqual({
      status: 200,
      body: {
        ancestry: [
          { id: agent.id, title: "Agent", level: "agent" },
          { id: team.id, title: "Team", level: "team" },
          { id: root.id, title: "Root", level: "realm" },
        ],
        depth: 3,
      },
    });
    const single = await call(server, "GET", `/api/directives/${realmId}/${root.id}/ancestry`);
    expect(single.body).toEqual({ ancestry: [{ id: root.id, title: "Root", level: "realm" }], depth: 1 });
  });

  it("stops at a loop or a missing parent written straight into state", async () => {
    const realmId = await newRealm(server);
    const a = await create({ realmId, title: "A", level: "realm" });
    const b = await create({ realmId, title: "B", level: "team", parentId: a.id });
    const c = await create({ realmId, title: "C", level: "agent", parentId: b.id });
    const write = (value: unknown) =>
      server.service.engine.trigger({
        function_id: "state::set",
        payload: { scope: `directives:${realmId}`, key: a.id, value },
      });
    await write({ ...a, parentId: c.id });
    const looped = await call(server, "GET", `/api/directives/${realmId}/${c.id}/ancestry`);
    expect(looped.status).toBe(200);
    expect(looped.body.ancestry.map((entry: { id: string }) => entry.id)).toEqual([c.id, b.id, a.id]);
    expect(looped.body.depth).toBe(3);

    await write({ ...a, parentId: "dir-gone" });
    const cut = await call(server, "GET", `/api/directives/${realmId}/${c.id}/ancestry`);
    expect(cut.body.ancestry.map((entry: { id: string }) => entry.id)).toEqual([c.id, b.id, a.id]);
  });

  it("answers 404 for an unknown directive", async () => {
    const realmId = await newRealm(server);
    const response = await call(server, "GET", `/api/directives/${realmId}/dir-nope/ancestry`);
    expect(response).toEqual({
      status: 404,
      body: { error: `Directive dir-nope not found in realm ${realmId}` },
    });
  });
});
