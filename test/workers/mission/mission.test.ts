import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentPrincipal } from "../../../src/engine/acting-agent.ts";
import { call, createAgent, newRealm, realmKey, recordTopic } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;
let realm: string;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  realm = await newRealm(server, "missions");
  key = await realmKey(server, realm);
});
afterAll(async () => {
  await server.close();
});

async function newMission(fields: Record<string, unknown> = {}) {
  const created = await call(
    server,
    "POST",
    "/api/missions",
    { realmId: realm, title: "Write the report", createdBy: "ext-planner", ...fields },
    key,
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as { id: string; status: string; version: number };
}

const path = (id: string, action = "") => `/api/missions/${realm}/${id}${action}`;

describe("missions", () => {
  it("creates a backlog mission for an agent id no worker knows (opaque ids), and lists and reads it", async () => {
    const events = recordTopic(server, "mission.lifecycle");
    const mission = await newMission({ priority: "HIGH", description: "quarterly" });
    expect(mission).toMatchObject({ status: "backlog", assigneeId: null, priority: "high", version: 1 });
    expect(mission.id).toMatch(/^msn-/);
    const listed = await call(server, "GET", `/api/missions/${realm}?status=backlog`, undefined, key);
    expect(listed.body.missions.map((m: { id: string }) => m.id)).toContain(mission.id);
    expect(listed.body.count).toBe(listed.body.missions.length);
    const read = await call(server, "GET", path(mission.id), undefined, key);
    expect(read.body).toMatchObject({ id: mission.id, comments: [] });
    await expect.poll(() => events.map((event) => event.type)).toContain("created");
  });

  it("lets exactly one of 20 concurrent checkouts win", async () => {
    const mission = await newMission();
    const attempts = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        call(server, "POST", path(mission.id, "/checkout"), { agentId: `worker-${index}` }, key),
      ),
    );
    const winners = attempts.filter((attempt) => attempt.status === 200);
    expect(winners).toHaveLength(1);
    expect(attempts.filter((attempt) => attempt.status === 409)).toHaveLength(19);
    const read = await call(server, "GET", path(mission.id), undefined, key);
    expect(read.body).toMatchObject({
      status: "active",
      assigneeId: winners[0]?.body.assigneeId,
      version: 2,
    });
    expect(attempts.find((attempt) => attempt.status === 409)?.body.error).toContain(
      "already checked out by",
    );
  });

  it("walks the state machine, refusing moves with a 409 naming both states", async () => {
    const mission = await newMission();
    const move = (status: string, agentId?: string) =>
      call(server, "POST", path(mission.id, "/transition"), { status, ...(agentId ? { agentId } : {}) }, key);
    const early = await move("complete");
    expect(early.status).toBe(409);
    expect(early.body.error).toBe(`Mission ${mission.id} cannot move from backlog to complete`);
    const direct = await move("active");
    expect(direct.body.error).toContain("/checkout");
    expect((await move("queued")).body.status).toBe("queued");
    await call(server, "POST", path(mission.id, "/checkout"), { agentId: "ext-a" }, key);
    // Only the assignee moves an active mission (a realm key must say who it is).
    expect((await move("review")).status).toBe(403);
    expect((await move("review", "ext-b")).status).toBe(403);
    expect((await move("review", "ext-a")).body.status).toBe("review");
    expect((await move("active", "ext-a")).body.status).toBe("active");
    expect((await move("review", "ext-a")).body.status).toBe("review");
    // An admin key may move it without being the assignee.
    const done = await call(server, "POST", path(mission.id, "/transition"), { status: "complete" });
    expect(done.body).toMatchObject({ status: "complete", completedAt: expect.any(String) });
    const after = await move("queued", "ext-a");
    expect(after.status).toBe(409);
    expect(after.body.error).toBe(`Mission ${mission.id} cannot move from complete to queued`);
    expect((await move("teleported")).status).toBe(400);
  });

  it("is released by its assignee only, back to the queue", async () => {
    const mission = await newMission();
    await call(server, "POST", path(mission.id, "/checkout"), { agentId: "ext-a" }, key);
    const stranger = await call(server, "POST", path(mission.id, "/release"), { agentId: "ext-b" }, key);
    expect(stranger.status).toBe(403);
    const released = await call(server, "POST", path(mission.id, "/release"), { agentId: "ext-a" }, key);
    expect(released.body).toMatchObject({ status: "queued", assigneeId: null });
    const again = await call(server, "POST", path(mission.id, "/checkout"), { agentId: "ext-b" }, key);
    expect(again.body).toMatchObject({ status: "active", assigneeId: "ext-b" });
  });

  it("keeps a blocked mission its assignee's, and a queued one unassigned for anyone to take", async () => {
    const mission = await newMission();
    const move = (status: string, agentId: string) =>
      call(server, "POST", path(mission.id, "/transition"), { status, agentId }, key);
    await call(server, "POST", path(mission.id, "/checkout"), { agentId: "ext-a" }, key);
    expect((await move("blocked", "ext-a")).body).toMatchObject({ status: "blocked", assigneeId: "ext-a" });
    const stranger = await move("cancelled", "ext-b");
    expect(stranger.status).toBe(403);
    expect(stranger.body.error).toContain("only its assignee");
    expect((await move("queued", "ext-a")).body).toMatchObject({ status: "queued", assigneeId: null });
    const taken = await call(server, "POST", path(mission.id, "/checkout"), { agentId: "ext-b" }, key);
    expect(taken.body).toMatchObject({ status: "active", assigneeId: "ext-b" });
  });

  it("lets an agent's own call write comments and missions in its own name only", async () => {
    const agent = await createAgent(server, realm, { name: "ventriloquist" });
    const mission = await newMission();
    const asAgent = (function_id: string, payload: Record<string, unknown>) =>
      server.service.engine.trigger({
        function_id,
        payload: { realmId: realm, ...payload },
        auth: agentPrincipal({ id: agent, realmId: realm }),
      });
    const comment = { id: mission.id, body: "approved, ship it" };
    await expect(asAgent("mission::comment", { ...comment, authorId: "ceo" })).rejects.toMatchObject({
      status: 403,
      message: expect.stringContaining("authorId ceo"),
    });
    await expect(asAgent("mission::create", { title: "x", createdBy: "ceo" })).rejects.toMatchObject({
      status: 403,
      message: expect.stringContaining("createdBy ceo"),
    });
    await expect(asAgent("mission::comment", { ...comment, authorId: agent })).resolves.toMatchObject({
      authorId: agent,
    });
    const read = await call(server, "GET", path(mission.id), undefined, key);
    expect(read.body.comments.map((c: { authorId: string }) => c.authorId)).toEqual([agent]);
  });

  it("pages by the mission, not its place: one added between two pages repeats none", async () => {
    const paged = await newRealm(server, "paged");
    const pagedKey = await realmKey(server, paged);
    const add = (title: string, priority = "normal") =>
      call(server, "POST", "/api/missions", { realmId: paged, title, createdBy: "x", priority }, pagedKey);
    for (const title of ["m0", "m1", "m2", "m3"]) await add(title);
    const list = (query: string) =>
      call(server, "GET", `/api/missions/${paged}?${query}`, undefined, pagedKey);
    const first = await list("limit=2");
    await add("urgent", "critical");
    const second = await list(`limit=2&cursor=${first.body.nextCursor}`);
    const titles = [...first.body.missions, ...second.body.missions].map((m: { title: string }) => m.title);
    // Each of the four once, in the listing's order; the critical one sorts before the cursor.
    expect([...titles].sort()).toEqual(["m0", "m1", "m2", "m3"]);
    const all = await list("limit=10");
    expect(all.body.missions.map((m: { title: string }) => m.title)).toEqual(["urgent", ...titles]);
  });

  it("keeps comments in order and counts them", async () => {
    const mission = await newMission();
    for (const body of ["first", "second"]) {
      const added = await call(
        server,
        "POST",
        path(mission.id, "/comments"),
        { authorId: "ext-a", body },
        key,
      );
      expect(added.status).toBe(201);
    }
    const read = await call(server, "GET", path(mission.id), undefined, key);
    expect(read.body.comments.map((c: { body: string }) => c.body)).toEqual(["first", "second"]);
    expect(read.body.commentCount).toBe(2);
    const empty = await call(
      server,
      "POST",
      path(mission.id, "/comments"),
      { authorId: "x", body: " " },
      key,
    );
    expect(empty.status).toBe(400);
  });

  it("keeps realms apart: another realm's key, or another realm's agent, is refused", async () => {
    const mission = await newMission();
    const other = await newRealm(server, "other");
    const otherKey = await realmKey(server, other);
    expect((await call(server, "GET", path(mission.id), undefined, otherKey)).status).toBe(404);
    const stranger = await createAgent(server, other);
    const checkout = await call(server, "POST", path(mission.id, "/checkout"), { agentId: stranger }, key);
    expect(checkout.status).toBe(404);
    // Another realm's key learns nothing of where an agent lives: its own agent or ours, the same answer.
    const probe = (agentId: string) =>
      call(server, "POST", path(mission.id, "/checkout"), { agentId }, otherKey);
    const ours = await createAgent(server, realm);
    expect((await probe(ours)).body).toEqual((await probe(stranger)).body);
    const known = await createAgent(server, realm);
    expect((await call(server, "POST", path(mission.id, "/checkout"), { agentId: known }, key)).status).toBe(
      200,
    );
  });

  it("goes with its realm, and a deleted agent's work goes back to the queue", async () => {
    const doomed = await newRealm(server, "doomed");
    const created = await call(server, "POST", "/api/missions", {
      realmId: doomed,
      title: "x",
      createdBy: "y",
    });
    expect(created.status).toBe(201);
    expect((await call(server, "DELETE", `/api/realms/${doomed}`)).status).toBe(200);
    const gone = await call(server, "GET", `/api/missions/${doomed}/${created.body.id}`);
    expect(gone.status).toBe(404);
    const agent = await createAgent(server, realm, { name: "leaver" });
    const mission = await newMission();
    await call(server, "POST", path(mission.id, "/checkout"), { agentId: agent }, key);
    expect((await call(server, "DELETE", `/api/agents/${agent}`)).status).toBe(204);
    const read = await call(server, "GET", path(mission.id), undefined, key);
    expect(read.body).toMatchObject({ status: "queued", assigneeId: null });
  });
});
