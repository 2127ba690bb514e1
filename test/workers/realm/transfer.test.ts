import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, createAgent, createRealm, recordTopic } from "../../helpers/control-plane.ts";
import { type JsonBody, startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.close();
});

async function ok(method: string, path: string, body?: unknown): Promise<JsonBody> {
  const response = await call(server, method, path, body);
  expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
  return response.body;
}

/**
 * A paused realm with three agents in a chain of command (lead ← manager ← worker), a directive tree
 * owned by them (one paused, one complete) and a secret.
 */
async function sourceRealm() {
  const realm = await createRealm(server, {
    description: "source",
    defaultModel: "gpt-4o",
    maxAgents: 5,
    metadata: { region: "eu" },
  });
  const realmId = realm.id;
  const lead = await createAgent(server, realmId, { name: "lead", systemPrompt: "Lead well." });
  const manager = await createAgent(server, realmId, { name: "manager", tools: ["memory::*"] });
  const worker = await createAgent(server, realmId, { name: "worker", temperature: 0.3 });
  await ok("POST", "/api/hierarchy", {
    realmId,
    agentId: lead,
    title: "CEO",
    capabilities: ["plan"],
    rank: 1,
  });
  await ok("POST", "/api/hierarchy", {
    realmId,
    agentId: manager,
    reportsTo: lead,
    title: "Manager",
    rank: 2,
  });
  await ok("POST", "/api/hierarchy", {
    realmId,
    agentId: worker,
    reportsTo: manager,
    capabilities: ["code"],
  });
  const goal = await ok("POST", "/api/directives", {
    realmId,
    title: "Goal",
    level: "realm",
    ownerAgentId: lead,
  });
  const team = await ok("POST", "/api/directives", {
    realmId,
    title: "Team goal",
    level: "team",
    parentId: goal.id,
    ownerAgentId: manager,
    priority: "high",
  });
  const task = await ok("POST", "/api/directives", {
    realmId,
    title: "Task",
    level: "agent",
    parentId: team.id,
    ownerAgentId: worker,
  });
  await ok("PATCH", `/api/directives/${realmId}/${team.id}`, { status: "Paused" });
  await ok("PATCH", `/api/directives/${realmId}/${task.id}`, { status: "Complete" });
  await ok("POST", "/api/vault", { key: `realm:${realmId}:api_token`, value: "s3cret" });
  await ok("PATCH", `/api/realms/${realmId}`, { status: "Paused" });
  return { realmId, agents: { lead, manager, worker } };
}

/** The document with every id replaced by a name, so two exports can be compared. */
function byName(doc: JsonBody) {
  const agentName = new Map<string, string>(doc.agents.map((a: JsonBody) => [a.id, a.name]));
  const directiveTitle = new Map<string, string>(doc.directives.map((d: JsonBody) => [d.id, d.title]));
  return {
    agents: doc.agents
      .map(({ id, realmId, createdAt, updatedAt, ...config }: JsonBody) => config)
      .sort((a: JsonBody, b: JsonBody) => a.name.localeCompare(b.name)),
    directives: doc.directives
      .map((d: JsonBody) => ({
        title: d.title,
        level: d.level,
        status: d.status,
        priority: d.priority,
        parent: directiveTitle.get(d.parentId),
        owner: agentName.get(d.ownerAgentId),
      }))
      .sort((a: JsonBody, b: JsonBody) => a.title.localeCompare(b.title)),
    hierarchy: doc.hierarchy.map((n: JsonBody) => ({
      ...n,
      agentId: agentName.get(n.agentId),
      reportsTo: n.reportsTo ? agentName.get(n.reportsTo) : null,
    })),
  };
}

describe("realm export", () => {
  it("exports the realm with its agents, directives and flattened org chart, secrets only unscrubbed", async () => {
    const { realmId, agents } = await sourceRealm();
    const doc = await ok("POST", `/api/realms/${realmId}/export`, {});
    expect(doc.version).toBe("1.0");
    expect(doc.realm).toMatchObject({ id: realmId, status: "Paused", maxAgents: 5 });
    expect(doc).not.toHaveProperty("secrets");
    expect(doc.agents).toHaveLength(3);
    expect(doc.directives).toHaveLength(3);
    expect(doc.hierarchy).toEqual([
      { agentId: agents.lead, reportsTo: null, title: "CEO", capabilities: ["plan"], rank: 1 },
      { agentId: agents.manager, reportsTo: agents.lead, title: "Manager", capabilities: [], rank: 2 },
      // The hierarchy worker's defaults for a node set without title and rank.
      { agentId: agents.worker, reportsTo: agents.manager, title: "", capabilities: ["code"], rank: 1 },
    ]);
    expect(JSON.stringify(doc)).not.toContain("s3cret");
    const full = await ok("POST", `/api/realms/${realmId}/export`, { scrubSecrets: false });
    expect(full.secrets).toEqual({ api_token: "s3cret" });
  });
});

describe("realm import", () => {
  it("round-trips: fresh ids everywhere, references rewritten, status and limits kept", async () => {
    const events = recordTopic(server, "realm.lifecycle");
    const { realmId } = await sourceRealm();
    const doc = await ok("POST", `/api/realms/${realmId}/export`, { scrubSecrets: false });
    const response = await call(server, "POST", "/api/realms/import", { data: doc, newOwner: "new-owner" });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ imported: true, realmId: expect.stringMatching(/^realm-/) });
    const copyId = response.body.realmId;
    expect(copyId).not.toBe(realmId);

    const copy = await ok("POST", `/api/realms/${copyId}/export`, { scrubSecrets: false });
    expect(copy.realm).toMatchObject({
      name: "Acme",
      owner: "new-owner",
      description: "source",
      status: "Paused",
      defaultModel: "gpt-4o",
      maxAgents: 5,
      metadata: { region: "eu" },
    });
    expect(byName(copy)).toEqual(byName(doc));
    const oldIds = [...doc.agents, ...doc.directives].map((item: JsonBody) => item.id);
    for (const id of oldIds) expect(JSON.stringify(copy)).not.toContain(id);
    for (const item of [...copy.agents, ...copy.directives]) expect(item.realmId).toBe(copyId);
    expect(copy.secrets).toEqual({ api_token: "s3cret" });
    await expect.poll(() => events.at(-1)).toEqual({ type: "created", realmId: copyId });
  });

  it("imports without secrets from a scrubbed export, and keeps the exported owner without newOwner", async () => {
    const { realmId } = await sourceRealm();
    const doc = await ok("POST", `/api/realms/${realmId}/export`, {});
    const { realmId: copyId } = await ok("POST", "/api/realms/import", { data: doc });
    const copy = await ok("POST", `/api/realms/${copyId}/export`, { scrubSecrets: false });
    expect(copy.realm.owner).toBe("ops@acme.test");
    expect(copy.secrets).toEqual({});
  });

  it("takes the export document as export answered it, newOwner then in the query", async () => {
    const { realmId } = await sourceRealm();
    const doc = await ok("POST", `/api/realms/${realmId}/export`, {});
    const response = await call(server, "POST", "/api/realms/import?newOwner=bare-owner", doc);
    expect(response.status).toBe(201);
    const copy = await ok("POST", `/api/realms/${response.body.realmId}/export`, {});
    expect(copy.realm).toMatchObject({ name: "Acme", owner: "bare-owner" });
    expect(copy.agents.map((agent: { name: string }) => agent.name).sort()).toEqual(
      doc.agents.map((agent: { name: string }) => agent.name).sort(),
    );
  });

  it("brings an archived realm back Active", async () => {
    const realm = await createRealm(server);
    await ok("PATCH", `/api/realms/${realm.id}`, { status: "Archived" });
    const doc = await ok("POST", `/api/realms/${realm.id}/export`, {});
    const { realmId } = await ok("POST", "/api/realms/import", { data: doc });
    expect((await ok("GET", `/api/realms/${realmId}`)).status).toBe("Active");
  });

  it.each([
    [{ version: "2.0", realm: { name: "x", owner: "o" } }, "unsupported export version: 2.0"],
    [{ realm: { name: "x", owner: "o" } }, "unsupported export version: null"],
    [{ version: "1.0", realm: { owner: "o" } }, "realm.name"],
    [{ version: "1.0", realm: { name: "x" } }, "owner is required"],
    [{ version: "1.0", realm: { name: "x", owner: "o" }, agents: "none" }, "agents"],
    [
      {
        version: "1.0",
        realm: { name: "x", owner: "o" },
        directives: [{ id: "d1", title: "t", level: "team", parentId: "d0" }],
      },
      "directive d1 names parent d0, which is not in the document",
    ],
  ])("refuses %j with 400: %s", async (data, text) => {
    const before = (await ok("GET", "/api/realms")).length;
    const response = await call(server, "POST", "/api/realms/import", { data });
    expect(response.status).toBe(400);
    expect(response.body.error).toContain(text);
    expect(await ok("GET", "/api/realms")).toHaveLength(before);
  });

  it("refuses a missing or non-object data with 400", async () => {
    for (const body of [{}, { data: [1] }, { data: "x" }]) {
      expect((await call(server, "POST", "/api/realms/import", body)).status).toBe(400);
    }
  });

  it("undoes everything it created when an item fails, naming the item", async () => {
    const { realmId } = await sourceRealm();
    const doc = await ok("POST", `/api/realms/${realmId}/export`, {});
    const broken = structuredClone(doc);
    broken.directives.find((d: JsonBody) => d.title === "Task").level = "galaxy";
    const agentsBefore = (await ok("GET", "/api/agents")).agents.length;
    const response = await call(server, "POST", "/api/realms/import", { data: broken });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatch(/^Import failed at directive dir-[0-9a-f-]+: .*level/);
    expect(await ok("GET", "/api/realms")).toHaveLength(2);
    expect((await ok("GET", "/api/agents")).agents).toHaveLength(agentsBefore);
  });
});
