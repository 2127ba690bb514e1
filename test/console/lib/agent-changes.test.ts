import { describe, expect, it } from "vitest";
import { agentChanges } from "../../../src/console/web/lib/agent-changes.ts";
import type { AgentDetail } from "../../../src/console/web/types.ts";

const agent = {
  id: "agent-1",
  name: "helper",
  model: "gpt-4o",
  description: "Helps",
  tools: ["tool::web_fetch", "memory::*"],
  toolProfile: "chat",
  capabilities: ["memory::*"],
  temperature: 0.2,
  realmId: "realm-default",
  status: "active",
  createdAt: "2026-11-26T00:00:00Z",
  updatedAt: "2026-11-26T00:00:00Z",
  resolvedTools: [],
} as AgentDetail;

const unchanged = {
  model: "gpt-4o",
  description: "Helps",
  toolProfile: "chat",
  tools: "tool::web_fetch, memory::*",
  capabilities: "memory::*",
  temperature: "0.2",
  systemPrompt: "",
};

describe("agentChanges", () => {
  it("sends nothing when the form shows the agent as it is", () => {
    expect(agentChanges(agent, unchanged)).toEqual({});
  });

  it("sends only the fields changed, lists split on commas", () => {
    expect(
      agentChanges(agent, {
        ...unchanged,
        tools: "tool::web_fetch,  tool::file_read ,",
        temperature: "1",
        systemPrompt: "Be brief",
      }),
    ).toEqual({ tools: ["tool::web_fetch", "tool::file_read"], temperature: 1, systemPrompt: "Be brief" });
  });

  it("leaves the model and the fields the API cannot clear as they are when emptied", () => {
    expect(agentChanges(agent, { ...unchanged, model: "", capabilities: "", temperature: "" })).toEqual({});
    expect(agentChanges(agent, { ...unchanged, description: "" })).toEqual({ description: "" });
  });
});
