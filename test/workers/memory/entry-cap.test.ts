import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../../src/engine/types.ts";
import { AppError } from "../../../src/shared/errors.ts";
import type { FakeOpenAI } from "../../helpers/fake-openai.ts";
import { NODE } from "../../helpers/process.ts";
import type { TestServer } from "../../helpers/server.ts";
import { backends, fakeEnv, newAgent, send, startFake, storedEntries } from "./embedding-env.ts";

const CAP = 5;

/**
 * Another process (a CLI command) stores memory entries of the agent straight into the SQLite file,
 * on its own connection.
 */
function storeElsewhere(dataDir: string, agentId: string, count: number): void {
  const script = `
    import { SqliteTextIndex } from ${JSON.stringify(new URL("../../../src/engine/search/sqlite.ts", import.meta.url).href)};
    const index = new SqliteTextIndex(${JSON.stringify(join(dataDir, "agentos.db"))});
    const agentId = ${JSON.stringify(agentId)};
    const createdAt = new Date().toISOString();
    await index.putMany("memory", agentId, Array.from({ length: ${count} }, (_, i) => {
      const entry = { id: "elsewhere-" + i, agentId, sessionId: null, role: "note", content: "cli fact " + i, createdAt };
      return { id: entry.id, doc: { text: entry.content, data: entry, createdAt } };
    }));
    await index.close();`;
  const child = spawnSync(NODE, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(child.status, child.stderr).toBe(0);
}

/**
 * AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT: each entry's size was bounded, their number was not, so a realm
 * key, a steered model (its memory tools) or memory::store_many could fill the disk. Past the cap a
 * store is a 409 naming it, whoever stores, and stores made at once do not pass it together.
 */
describe.each(backends)("memory entries per agent ($name)", (backend) => {
  let fake: FakeOpenAI;
  let storage: Awaited<ReturnType<typeof backend.storage>>;
  let live: TestServer;
  beforeAll(async () => {
    fake = await startFake();
    storage = await backend.storage();
    live = await storage.start(fakeEnv(fake), { memoryMaxEntriesPerAgent: CAP });
  });
  afterAll(async () => {
    await live?.close();
    await storage?.drop();
    await fake?.close();
  });

  const entries = (agentId: string) => storedEntries(live, agentId);
  const realmOf = async (agentId: string) =>
    (await send(live, "GET", `/api/agents/${agentId}`)).body.realmId as string;
  /** The agent itself (its memory tools): a realm principal acting for it. */
  const asAgent = async (agentId: string): Promise<Principal> => ({
    kind: "realm",
    keyId: `agent:${agentId}`,
    realmId: await realmOf(agentId),
    agentId,
  });
  const store = (agentId: string, auth: Principal, content = "a fact") =>
    live.service.engine.trigger({ function_id: "memory::store", payload: { agentId, content }, auth }).then(
      () => "stored",
      (error: unknown) => error,
    );
  const storeMany = (agentId: string, auth: Principal | undefined, count: number) =>
    live.service.engine
      .trigger({
        function_id: "memory::store_many",
        payload: { agentId, entries: Array.from({ length: count }, (_, i) => ({ content: `fact ${i}` })) },
        ...(auth ? { auth } : {}),
      })
      .then(
        () => "stored",
        (error: unknown) => error,
      );
  const expectFull = (outcome: unknown, agentId: string) => {
    expect(outcome).toBeInstanceOf(AppError);
    expect((outcome as AppError).status).toBe(409);
    expect((outcome as AppError).message).toBe(
      `Agent ${agentId} holds the most memory entries an agent may (${CAP}, AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT): delete some first`,
    );
  };

  it("refuses the agent's own store past the cap, and takes one again once one is deleted", async () => {
    const agentId = await newAgent(live);
    const auth = await asAgent(agentId);
    for (let i = 0; i < CAP; i++) expect(await store(agentId, auth, `fact ${i}`)).toBe("stored");
    expectFull(await store(agentId, auth), agentId);
    expect(await entries(agentId)).toBe(CAP);

    const { body } = await send(live, "GET", `/api/agents/${agentId}/memory`);
    const deleted = await send(live, "DELETE", `/api/agents/${agentId}/memory/${body.memories[0].id}`);
    expect(deleted.status).toBe(204);
    expect(await store(agentId, auth)).toBe("stored");
    expectFull(await store(agentId, auth), agentId);
  });

  it("refuses a batch that would pass the cap whole, the service's own and an admin's too", async () => {
    const agentId = await newAgent(live);
    expect(await storeMany(agentId, undefined, CAP - 1)).toBe("stored");
    expectFull(await storeMany(agentId, undefined, 2), agentId);
    expectFull(await storeMany(agentId, { kind: "admin", keyId: "key-admin" }, 2), agentId);
    expect(await entries(agentId)).toBe(CAP - 1);
    expect(await storeMany(agentId, undefined, 1)).toBe("stored");
    expect(await entries(agentId)).toBe(CAP);
  });

  // In one process stores at once never pass the cap (one may be refused a little early: a write that
  // lands while another store counts is counted twice), and the room left is then taken.
  it("lets stores made at once fill the cap and no more", async () => {
    const agentId = await newAgent(live);
    const auth = await asAgent(agentId);
    const outcomes = await Promise.all(
      Array.from({ length: 4 * CAP }, (_, i) => store(agentId, auth, `fact ${i}`)),
    );
    const stored = outcomes.filter((outcome) => outcome === "stored").length;
    expect(stored).toBeLessThanOrEqual(CAP);
    for (const outcome of outcomes.filter((outcome) => outcome !== "stored")) expectFull(outcome, agentId);
    expect(await entries(agentId)).toBe(stored);
    for (let i = stored; i < CAP; i++) expect(await store(agentId, auth)).toBe("stored");
    expectFull(await store(agentId, auth), agentId);
    expect(await entries(agentId)).toBe(CAP);
  });

  it("has room again once the agent's memory is cleared", async () => {
    const agentId = await newAgent(live);
    expect(await storeMany(agentId, undefined, CAP)).toBe("stored");
    expectFull(await storeMany(agentId, undefined, 1), agentId);
    expect((await send(live, "DELETE", `/api/agents/${agentId}/memory`)).status).toBe(200);
    expect(await storeMany(agentId, undefined, CAP)).toBe("stored");
  });

  it("answers a full agent's turns all the same, without keeping their memories", async () => {
    const agentId = await newAgent(live);
    expect(await storeMany(agentId, undefined, CAP)).toBe("stored");
    const turn = await send(live, "POST", `/api/agents/${agentId}/message`, { message: "hello" });
    expect(turn.status, JSON.stringify(turn.body)).toBe(200);
    expect(await entries(agentId)).toBe(CAP);
  });

  // A count kept in the service's memory missed these until its next restart, and let the agent pass the cap.
  it.runIf(backend.name === "SQLite")(
    "counts what another process stores into the file meanwhile",
    async () => {
      const agentId = await newAgent(live);
      expect(await storeMany(agentId, undefined, CAP - 2)).toBe("stored");
      expect(await storeMany(agentId, undefined, 1)).toBe("stored");
      storeElsewhere(live.dataDir, agentId, 1);
      expect(await entries(agentId)).toBe(CAP);
      expectFull(await storeMany(agentId, undefined, 1), agentId);
      const { body } = await send(live, "GET", `/api/agents/${agentId}/memory`);
      expect(body.memories.map((memory: { id: string }) => memory.id)).toContain("elsewhere-0");
      expect((await send(live, "DELETE", `/api/agents/${agentId}/memory/elsewhere-0`)).status).toBe(204);
      expect(await storeMany(agentId, undefined, 1)).toBe("stored");
      expectFull(await storeMany(agentId, undefined, 1), agentId);
    },
  );

  it("counts what an earlier process stored", async () => {
    const agentId = await newAgent(live);
    expect(await storeMany(agentId, undefined, CAP)).toBe("stored");
    await live.close();
    live = await storage.start(fakeEnv(fake), { memoryMaxEntriesPerAgent: CAP });
    expectFull(await storeMany(agentId, undefined, 1), agentId);
    expect(await entries(agentId)).toBe(CAP);
  });
});
