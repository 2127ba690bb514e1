import { describe, expect, it } from "vitest";
import { call, createAgent, createRealm } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";

const env = serverWithFakeModel();

const trigger = (function_id: string, payload: unknown) =>
  env.server.service.engine.trigger({ function_id, payload });
const message = (agentId: string, sessionId: string) =>
  call(env.server, "POST", `/api/agents/${agentId}/message`, { message: "hi", sessionId });

/** Every session id the listing gives, page by page of `limit`. */
async function listed(agentId: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`;
    const page = await call(env.server, "GET", `/api/agents/${agentId}/sessions?${query}`);
    expect(page.status).toBe(200);
    ids.push(...page.body.sessions.map((session: { id: string }) => session.id));
    cursor = page.body.nextCursor;
  } while (cursor);
  return ids;
}

/** A session as a store written before the session order existed holds it: the record alone. */
async function oldSession(agentId: string, id: string, updatedAt: string) {
  const value = { id, agentId, title: id, messageCount: 0, createdAt: updatedAt, updatedAt, metadata: {} };
  await trigger("state::set", { scope: `agent_sessions:${agentId}`, key: id, value });
}

describe("an agent's sessions listed newest first", () => {
  it("page by page, each once, a session moving to the front with each new turn", async () => {
    const realm = await createRealm(env.server);
    const agentId = await createAgent(env.server, realm.id, { name: "a" });
    for (const id of ["s1", "s2", "s3", "s4", "s5"]) {
      expect((await message(agentId, id)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    expect(await listed(agentId, 2)).toEqual(["s5", "s4", "s3", "s2", "s1"]);
    expect((await message(agentId, "s2")).status).toBe(200);
    expect(await listed(agentId, 2)).toEqual(["s2", "s5", "s4", "s3", "s1"]);
    expect(await listed(agentId, 500)).toEqual(["s2", "s5", "s4", "s3", "s1"]);
  });

  it("lists sessions stored before the order existed, once, in order", async () => {
    const realm = await createRealm(env.server);
    const agentId = await createAgent(env.server, realm.id, { name: "a" });
    await oldSession(agentId, "old-1", "2026-01-01T00:00:00.000Z");
    await oldSession(agentId, "old-2", "2026-01-02T00:00:00.000Z");
    expect((await message(agentId, "new")).status).toBe(200);
    expect(await listed(agentId, 1)).toEqual(["new", "old-2", "old-1"]);
  });

  it("reads a page from the order, not every session: a record the order does not name is not read", async () => {
    const realm = await createRealm(env.server);
    const agentId = await createAgent(env.server, realm.id, { name: "a" });
    expect((await message(agentId, "kept")).status).toBe(200);
    expect(await listed(agentId, 50)).toEqual(["kept"]);
    // Once the agent's sessions are in the order, a listing no longer walks the sessions' records.
    await oldSession(agentId, "unlisted", "2030-01-01T00:00:00.000Z");
    expect(await listed(agentId, 50)).toEqual(["kept"]);
  });

  it("skips and drops an entry its session has moved on from, and forgets the order with the agent", async () => {
    const realm = await createRealm(env.server);
    const agentId = await createAgent(env.server, realm.id, { name: "a" });
    expect((await message(agentId, "s")).status).toBe(200);
    const scope = `agent_session_order:${agentId}`;
    await trigger("state::set", { scope, key: "0000000000000:s", value: { sessionId: "s" } });
    expect(await listed(agentId, 50)).toEqual(["s"]);
    const entries = (await trigger("state::list", { scope })) as { items: unknown[] };
    expect(entries.items).toHaveLength(1);
    expect((await call(env.server, "DELETE", `/api/agents/${agentId}`)).status).toBe(204);
    expect(((await trigger("state::list", { scope })) as { items: unknown[] }).items).toEqual([]);
  });
});
