import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../../src/engine/types.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { createAgent, newRealm } from "../../helpers/control-plane.ts";
import type { FakeOpenAI } from "../../helpers/fake-openai.ts";
import { holdCalls, until } from "../../helpers/races.ts";
import type { TestServer } from "../../helpers/server.ts";
import { backends, fakeEnv, send, startFake, storedEntries } from "./embedding-env.ts";

/**
 * A realm delete purges its agents without marking them `deleting` (agent::delete does): a memory store
 * whose write lands after the purge forgot the agent's memory, and whose check then still finds the
 * agent (its record goes after its memory), kept an entry nothing would ever forget. The interleaving is
 * made by holding the store's write until the purge has forgotten the memory, and the purge there until
 * the store has answered.
 */
describe.each(backends)("a memory store racing its realm's delete ($name)", (backend) => {
  let fake: FakeOpenAI;
  let storage: Awaited<ReturnType<typeof backend.storage>>;
  let live: TestServer;
  beforeAll(async () => {
    fake = await startFake();
    storage = await backend.storage();
    live = await storage.start(fakeEnv(fake));
  });
  afterAll(async () => {
    await live?.close();
    await storage?.drop();
    await fake?.close();
  });

  const entries = (agentId: string) => storedEntries(live, agentId);

  it.each([
    ["memory::store", "the agent itself"],
    ["memory::store_many", "its realm's key"],
  ] as const)("%s by %s keeps nothing of a deleted realm", async (functionId, by) => {
    const realmId = await newRealm(live);
    const agentId = await createAgent(live, realmId);
    const auth: Principal =
      by === "the agent itself"
        ? { kind: "realm", keyId: `agent:${agentId}`, realmId, agentId }
        : { kind: "realm", keyId: "key-realm", realmId };
    const payload =
      functionId === "memory::store"
        ? { agentId, content: "written behind the purge" }
        : { agentId, entries: [{ content: "written behind the purge" }] };

    const write = holdCalls(live, "search::put_many", (input) => input.scope === agentId, { after: false });
    const single = holdCalls(live, "search::put", (input) => input.scope === agentId, { after: false });
    const forget = holdCalls(live, "memory::forget_agent", (input) => input.agentId === agentId, {
      after: true,
    });
    const stored = live.service.engine.trigger({ function_id: functionId, payload, auth }).then(
      () => "stored",
      (error: unknown) => error,
    );
    await until(() => write.held() + single.held() === 1);
    const deleted = send(live, "DELETE", `/api/realms/${realmId}`);
    await until(() => forget.held() === 1);
    write.release();
    single.release();
    const outcome = await stored;
    forget.release();
    expect((await deleted).status).toBe(200);

    expect(outcome).toBeInstanceOf(AppError);
    expect((outcome as AppError).status).toBe(409);
    expect((outcome as AppError).message).toBe(`Realm ${realmId} is being deleted`);
    expect(await entries(agentId)).toBe(0);
  });
});
