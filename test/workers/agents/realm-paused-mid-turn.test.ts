import { describe, expect, it } from "vitest";
import { systemPrincipal } from "../../../src/engine/types.ts";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";

const env = serverWithFakeModel({}, { shared: true });

describe("a realm paused while an agent's turn is under way", () => {
  it("makes no further model call in it (DESIGN §5: checked before every model call)", async () => {
    const engine = env.server.service.engine;
    engine
      .worker("pause-test")
      .registerFunction(
        { id: "pausing::realm", description: "Pauses the realm (stands for an operator doing so)" },
        async (input) => {
          const { realmId } = input as { realmId: string };
          await engine.trigger({
            function_id: "realm::update",
            payload: { id: realmId, status: "Paused" },
            auth: systemPrincipal,
          });
          return { paused: true };
        },
      );
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { tools: ["pausing::realm"] });
    const before = env.fake.requests.length;
    env.fake.reply(
      { toolCalls: [{ name: "pausing__realm", arguments: { realmId } }] },
      { toolCalls: [{ name: "pausing__realm", arguments: { realmId } }] },
      { content: "kept going in a paused realm" },
    );
    const turn = await call(env.server, "POST", `/api/agents/${agentId}/message`, { message: "go" });
    expect(turn.status, JSON.stringify(turn.body)).toBe(409);
    expect(turn.body.error).toContain(`Realm ${realmId} is paused`);
    expect(env.fake.requests.length - before).toBe(1);
  });
});
