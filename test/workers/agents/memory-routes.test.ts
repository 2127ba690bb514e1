import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

async function remember(agentId: string, content: string): Promise<string> {
  const entry = (await server.service.engine.trigger({
    function_id: "memory::store",
    payload: { agentId, content },
  })) as { id: string };
  return entry.id;
}

describe("an agent's memories over HTTP", () => {
  it("lists them newest first, page by page; deletes one (204, then 404) and then all", async () => {
    const realmId = await newRealm(server);
    const id = await createAgent(server, realmId);
    const ids = [];
    for (const text of ["first fact", "second fact", "third fact"]) ids.push(await remember(id, text));
    const page = await call(server, "GET", `/api/agents/${id}/memory?limit=2`);
    expect(page.status).toBe(200);
    expect(page.body.memories.map((m: { content: string }) => m.content)).toEqual([
      "third fact",
      "second fact",
    ]);
    const rest = await call(server, "GET", `/api/agents/${id}/memory?limit=2&cursor=${page.body.nextCursor}`);
    expect(rest.body).toMatchObject({ memories: [{ content: "first fact", id: ids[0] }], nextCursor: null });

    expect((await call(server, "DELETE", `/api/agents/${id}/memory/${ids[1]}`)).status).toBe(204);
    const again = await call(server, "DELETE", `/api/agents/${id}/memory/${ids[1]}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toContain(ids[1]);
    const left = await call(server, "GET", `/api/agents/${id}/memory`);
    expect(left.body.memories.map((m: { id: string }) => m.id)).toEqual([ids[2], ids[0]]);
    const recalled = await call(server, "POST", `/api/agents/${id}/memory`, { query: "second fact" });
    expect(recalled.body.results.map((m: { id: string }) => m.id)).not.toContain(ids[1]);

    expect((await call(server, "DELETE", `/api/agents/${id}/memory`)).body).toEqual({ deleted: 2 });
    expect((await call(server, "GET", `/api/agents/${id}/memory`)).body.memories).toEqual([]);
  });

  it("refuses a bad cursor with 400, and shows another realm's key nothing (404)", async () => {
    const realmId = await newRealm(server);
    const id = await createAgent(server, realmId);
    const memoryId = await remember(id, "private note");
    const bad = await call(server, "GET", `/api/agents/${id}/memory?cursor=nope!`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("cursor");
    const stranger = await realmKey(server, await newRealm(server));
    for (const [method, path] of [
      ["GET", `/api/agents/${id}/memory`],
      ["DELETE", `/api/agents/${id}/memory/${memoryId}`],
      ["DELETE", `/api/agents/${id}/memory`],
    ] as const) {
      expect((await call(server, method, path, undefined, stranger)).status, `${method} ${path}`).toBe(404);
    }
    expect((await call(server, "GET", `/api/agents/${id}/memory`)).body.memories).toHaveLength(1);
  });
});
