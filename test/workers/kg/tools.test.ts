import { describe, expect, it } from "vitest";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";

const env = serverWithFakeModel();

describe("an agent using its knowledge graph through tools", () => {
  it("records facts with tool::kg_add and reads them back with tool::kg_query and tool::kg_visualize", async () => {
    const realmId = await newRealm(env.server, "kg-tools");
    const agentId = await createAgent(env.server, realmId, { name: "archivist", tools: ["tool::kg_*"] });
    env.fake.reply(
      {
        toolCalls: [
          {
            name: "tool__kg_add",
            arguments: {
              entity: "acme",
              type: "company",
              relations: [{ target: "berlin", type: "based_in" }],
            },
          },
        ],
      },
      { toolCalls: [{ name: "tool__kg_query", arguments: { entity: "berlin", depth: 1 } }] },
      { toolCalls: [{ name: "tool__kg_visualize", arguments: { entity: "acme" } }] },
      { content: "Noted: Acme is based in Berlin." },
    );
    const reply = await call(env.server, "POST", `/api/agents/${agentId}/message`, {
      message: "Acme is in Berlin",
    });
    expect(reply.body.content).toBe("Noted: Acme is based in Berlin.");
    // The fact landed in this agent's own graph (the model never named the agent).
    const stored = await call(env.server, "POST", "/api/kg/query", { agentId, entity: "acme", depth: 0 });
    expect(stored.body).toMatchObject([
      { entity: "acme", version: 1, relations: [{ target: "berlin", type: "based_in" }] },
    ]);
    const toolResults = JSON.stringify(env.fake.requests.at(-1));
    // The query from berlin found acme through the inverse relation; the diagram draws the edge.
    expect(toolResults).toContain("acme");
    expect(toolResults).toContain("graph LR");
    expect(toolResults).toContain("n0 -->|");
  });
});
