import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemPrincipal } from "../../../src/engine/types.ts";
import { AppError } from "../../../src/shared/errors.ts";
import type { TestServer } from "../../helpers/server.ts";
import { backends, newAgent, send, storedEntries } from "./embedding-env.ts";

/** Memory stored for an agent that is gone: nothing would ever forget it, so it is not kept. */
describe.each(backends)("memory of a deleted agent ($name)", (backend) => {
  let storage: Awaited<ReturnType<typeof backend.storage>>;
  let live: TestServer;
  beforeAll(async () => {
    storage = await backend.storage();
    live = await storage.start({ OPENAI_API_KEY: "sk-test" });
  });
  afterAll(async () => {
    await live?.close();
    await storage?.drop();
  });

  const entries = (agentId: string) => storedEntries(live, agentId);

  it("keeps no finding a swarm archives for a member deleted before it dissolved", async () => {
    const agentId = await newAgent(live);
    const swarm = await send(live, "POST", "/api/swarm/create", { goal: "plan", agentIds: [agentId] });
    expect(swarm.status).toBe(201);
    const { swarmId } = swarm.body;
    const finding = { agentId, type: "observation", message: "the deleted agent's finding" };
    expect((await send(live, "POST", `/api/swarm/${swarmId}/broadcast`, finding)).status).toBe(200);
    expect((await send(live, "DELETE", `/api/agents/${agentId}`)).status).toBe(204);

    const dissolved = await send(live, "POST", `/api/swarm/${swarmId}/dissolve`, {});
    expect(dissolved.status).toBe(200);
    expect(dissolved.body).toMatchObject({ status: "dissolved", archived: 0 });
    expect(await entries(agentId)).toBe(0);
  });

  // The service's own store_many is a turn's, whose writes the agents worker takes back itself.
  it.each([
    ["memory::store", systemPrincipal],
    ["memory::store_many", { kind: "admin", keyId: "key-admin" } as const],
  ] as const)("answers %s for a deleted agent 404 and keeps nothing", async (functionId, auth) => {
    const agentId = await newAgent(live);
    expect((await send(live, "DELETE", `/api/agents/${agentId}`)).status).toBe(204);
    const payload =
      functionId === "memory::store"
        ? { agentId, content: "too late" }
        : { agentId, entries: [{ content: "too late" }, { content: "also too late" }] };
    const error = await live.service.engine
      .trigger({ function_id: functionId, payload, auth })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("not_found");
    expect((error as AppError).message).toBe(`Agent ${agentId} not found`);
    expect(await entries(agentId)).toBe(0);
  });
});
