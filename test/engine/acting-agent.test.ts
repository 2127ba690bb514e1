import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ACTS_FOR_AGENT,
  actingAgentOf,
  agentPrincipal,
  withActingAgent,
} from "../../src/engine/acting-agent.ts";
import { Engine } from "../../src/engine/engine.ts";
import { systemPrincipal } from "../../src/engine/types.ts";

describe("the acting agent", () => {
  const agent = agentPrincipal({ id: "agent-1", realmId: "realm-1" });

  it("is a principal of the agent's realm that names the agent", () => {
    expect(agent).toEqual({ kind: "realm", realmId: "realm-1", keyId: "agent:agent-1", agentId: "agent-1" });
    expect(actingAgentOf(agent)).toBe("agent-1");
    expect(actingAgentOf({ kind: "realm", realmId: "realm-1", keyId: "key-1" })).toBeUndefined();
    expect(actingAgentOf(systemPrincipal)).toBeUndefined();
  });

  it("fills in agentId where the caller left it out, and keeps one a trusted caller named", () => {
    expect(withActingAgent({ path: "a" }, agent)).toEqual({ path: "a", agentId: "agent-1" });
    expect(withActingAgent(undefined, agent)).toEqual({ agentId: "agent-1" });
    expect(withActingAgent({ agentId: "agent-2" }, agent)).toEqual({ agentId: "agent-2" });
    expect(withActingAgent({ path: "a" }, systemPrincipal)).toEqual({ path: "a" });
    expect(withActingAgent([1], agent)).toEqual([1]);
  });

  it("reaches a function that declares ACTS_FOR_AGENT through the engine; others get nothing filled in", async () => {
    const engine = new Engine();
    const worker = engine.worker("test");
    const input = z.strictObject({ agentId: z.string() });
    worker.registerFunction({ id: "test::own", input, metadata: ACTS_FOR_AGENT }, ({ agentId }) => agentId);
    worker.registerFunction({ id: "test::plain", input }, ({ agentId }) => agentId);
    expect(await engine.trigger({ function_id: "test::own", payload: {}, auth: agent })).toBe("agent-1");
    await expect(
      engine.trigger({ function_id: "test::plain", payload: {}, auth: agent }),
    ).rejects.toMatchObject({
      status: 400,
    });
    await expect(engine.trigger({ function_id: "test::own", payload: {} })).rejects.toMatchObject({
      status: 400,
    });
    expect(await engine.trigger({ function_id: "test::own", payload: { agentId: "agent-9" } })).toBe(
      "agent-9",
    );
  });
});
