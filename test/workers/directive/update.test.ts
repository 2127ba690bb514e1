import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../../src/shared/clock.ts";
import { call, createAgent, newRealm, recordTopic } from "../../helpers/control-plane.ts";
import type { JsonBody, TestServer } from "../../helpers/server.ts";
import { startTestServer } from "../../helpers/server.ts";
import { createDirective } from "./fixtures.ts";

let server: TestServer;
let events: JsonBody[];

beforeAll(async () => {
  server = await startTestServer();
  events = recordTopic(server, "directive.lifecycle");
});
afterAll(() => server.close());
afterEach(() => setClock(null));

const STATUSES = ["Active", "Paused", "Complete", "Cancelled"] as const;
const TERMINAL = new Set(["Complete", "Cancelled"]);

/** A new directive in a new realm, moved to `status` first when that is not Active. */
async function directiveIn(status: (typeof STATUSES)[number] = "Active") {
  const realmId = await newRealm(server);
  let directive = await createDirective(server, { realmId, title: "Goal", level: "team" });
  if (status !== "Active") directive = (await patch(directive, { status })).body;
  expect(directive.status).toBe(status);
  return directive;
}

const patch = (directive: { realmId: string; id: string }, body: Record<string, unknown>) =>
  call(server, "PATCH", `/api/directives/${directive.realmId}/${directive.id}`, body);

const eventsOf = (id: string) => events.filter((event) => event.directiveId === id);

describe("directive status transitions", () => {
  const pairs = STATUSES.flatMap((from) => STATUSES.map((to) => [from, to] as const));

  it.each(pairs)("%s → %s", async (from, to) => {
    const directive = await directiveIn(from);
    const before = directive.version;
    // created, plus updated and status_changed when the setup moved it: wait for them to settle first.
    const setupEvents = from === "Active" ? 1 : 3;
    await expect.poll(() => eventsOf(directive.id).length).toBe(setupEvents);
    const response = await patch(directive, { status: to });
    if (!TERMINAL.has(from)) {
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: to, version: before + 1 });
      const { realmId, id: directiveId } = directive;
      const expected: JsonBody[] = [{ type: "updated", directiveId, realmId, version: before + 1 }];
      if (from !== to) expected.push({ type: "status_changed", directiveId, realmId, from, to });
      await expect.poll(() => eventsOf(directive.id).slice(setupEvents)).toEqual(expected);
      return;
    }
    const error =
      from === to
        ? `directive ${directive.id} is ${from} and read-only`
        : `directive ${directive.id} cannot move from ${from} to ${to}`;
    expect(response).toEqual({ status: 409, body: { error } });
    const stored = await call(server, "GET", `/api/directives/${directive.realmId}/${directive.id}`);
    expect(stored.body).toMatchObject({ status: from, version: before });
  });

  it("keeps a terminal directive read-only for every other field too", async () => {
    const directive = await directiveIn("Complete");
    for (const change of [
      { title: "Renamed" },
      { description: "More" },
      { priority: "low" },
      { description: null },
    ]) {
      const response = await patch(directive, change);
      expect(response).toEqual({
        status: 409,
        body: { error: `directive ${directive.id} is Complete and read-only` },
      });
    }
  });

  it("accepts a status in any case and stores its canonical spelling", async () => {
    const directive = await directiveIn();
    const response = await patch(directive, { status: "paused" });
    expect(response.body.status).toBe("Paused");
  });
});

describe("directive field updates", () => {
  it("changes the given fields only, bumps version and updatedAt, and null clears an optional field", async () => {
    let now = Date.parse("2031-01-01T00:00:00Z");
    setClock({ now: () => now });
    const directive = await directiveIn();
    const owner = await createAgent(server, directive.realmId, { name: "owner" });
    now += 60_000;
    const first = await patch(directive, {
      title: "New goal",
      description: "Why",
      priority: "critical",
      ownerAgentId: owner,
    });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      ...directive,
      title: "New goal",
      description: "Why",
      priority: "critical",
      ownerAgentId: owner,
      version: 2,
      updatedAt: "2031-01-01T00:01:00.000Z",
    });
    const cleared = await patch(directive, { description: null, priority: null, ownerAgentId: null });
    expect(cleared.body).toEqual({
      ...directive,
      title: "New goal",
      version: 3,
      updatedAt: "2031-01-01T00:01:00.000Z",
    });
    const read = await call(server, "GET", `/api/directives/${directive.realmId}/${directive.id}`);
    expect(read.body).toEqual(cleared.body);
  });

  it.each([
    [{}, "an update needs at least one of title, description, status, priority, ownerAgentId"],
    [{ expectedVersion: 1 }, "an update needs at least one of"],
    [{ status: "Done" }, "status must be one of Active, Paused, Complete, Cancelled"],
    [{ title: "" }, "title"],
    [{ title: null }, "title"],
    [{ level: "realm" }, "level"],
    [{ parentId: "dir-x" }, "parentId"],
    [{ title: "x", expectedVersion: "1" }, "expectedVersion"],
    [{ title: "x", expectedVersion: 0 }, "expectedVersion"],
  ])("refuses %j with 400 naming %s", async (body, message) => {
    const directive = await directiveIn();
    const response = await patch(directive, body);
    expect(response.status).toBe(400);
    expect(response.body.error).toContain(message);
  });

  it("answers 404 for a missing directive and for an owner in another realm; an unknown owner id is opaque", async () => {
    const directive = await directiveIn();
    const missing = await patch({ realmId: directive.realmId, id: "dir-missing" }, { title: "x" });
    expect(missing).toEqual({
      status: 404,
      body: { error: `Directive dir-missing not found in realm ${directive.realmId}` },
    });
    const otherRealm = await newRealm(server);
    const outsider = await createAgent(server, otherRealm, { name: "outsider" });
    const owner = await patch(directive, { ownerAgentId: outsider });
    expect(owner).toEqual({
      status: 404,
      body: { error: `Agent ${outsider} not found in realm ${directive.realmId}` },
    });
    const external = await patch(directive, { ownerAgentId: "agent-of-a-remote-runtime" });
    expect(external.status).toBe(200);
  });
});

describe("directive versioning", () => {
  it("applies an update with the current expectedVersion and refuses a stale one with 409", async () => {
    const directive = await directiveIn();
    const ok = await patch(directive, { title: "Second", expectedVersion: 1 });
    expect(ok.body).toMatchObject({ title: "Second", version: 2 });
    const stale = await patch(directive, { title: "Lost", expectedVersion: 1 });
    expect(stale).toEqual({
      status: 409,
      body: { error: `directive ${directive.id} version conflict: expected version 1, current version 2` },
    });
    const read = await call(server, "GET", `/api/directives/${directive.realmId}/${directive.id}`);
    expect(read.body).toMatchObject({ title: "Second", version: 2 });
  });

  it("lets exactly one of two simultaneous updates with the same expectedVersion win", async () => {
    const directive = await directiveIn();
    const results = await Promise.all([
      patch(directive, { title: "Left", expectedVersion: 1 }),
      patch(directive, { title: "Right", expectedVersion: 1 }),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual([200, 409]);
    const winner = results.find((result) => result.status === 200)?.body;
    const read = await call(server, "GET", `/api/directives/${directive.realmId}/${directive.id}`);
    expect(read.body).toMatchObject({ title: winner.title, version: 2 });
  });

  it("loses none of 20 simultaneous updates without expectedVersion", async () => {
    const directive = await directiveIn();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => patch(directive, { title: `Title ${index}` })),
    );
    expect(results.every((result) => result.status === 200)).toBe(true);
    const versions = results.map((result) => result.body.version).sort((a: number, b: number) => a - b);
    expect(versions).toEqual(Array.from({ length: 20 }, (_, index) => index + 2));
    const read = await call(server, "GET", `/api/directives/${directive.realmId}/${directive.id}`);
    expect(read.body.version).toBe(21);
    await expect
      .poll(() => eventsOf(directive.id).filter((event) => event.type === "updated").length)
      .toBe(20);
  });
});
