import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_YAML_FILE_BYTES } from "../../../src/shared/yaml-file.ts";
import { autogen } from "../../../src/workers/migrate/frameworks/autogen.ts";
import { crewai } from "../../../src/workers/migrate/frameworks/crewai.ts";
import { langgraph } from "../../../src/workers/migrate/frameworks/langgraph.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "agentos-reader-"));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe("framework readers", () => {
  it("refuses a CrewAI file over the YAML limit, and one repeating a key, naming the line", async () => {
    const crew = (agents: string) =>
      project({
        "config/agents.yaml": agents,
        "config/tasks.yaml": "analyse:\n  description: Analyse\n  agent: analyst\n",
      });
    // Parsed on the thread serving requests, where a large one (500 kB of keys: half a minute) held it.
    const large = `analyst:\n  role: Analyst\n  backstory: "${"a".repeat(MAX_YAML_FILE_BYTES)}"\n`;
    await expect(crewai.read(crew(large))).rejects.toThrow(/agents\.yaml: is larger than 256 KiB of YAML$/);
    const twice = "analyst:\n  role: Analyst\n  role: Again\n";
    await expect(crewai.read(crew(twice))).rejects.toThrow(
      /agents\.yaml:3: is not valid YAML: Map keys must be unique/,
    );
  });

  it("makes a hierarchical CrewAI crew a manager agent that delegates the tasks", async () => {
    const dir = project({
      "config/agents.yaml": "analyst:\n  role: Analyst\n  goal: Analyse\n  backstory: Careful.\n",
      "config/tasks.yaml":
        "analyse:\n  description: Analyse the data\n  expected_output: A table\n  agent: analyst\n",
      "crew.py":
        'from crewai import Crew, Process\n\n@CrewBase\nclass MarketCrew:\n    @crew\n    def crew(self) -> Crew:\n        return Crew(agents=self.agents, tasks=self.tasks, process=Process.hierarchical, manager_llm="gpt-4o")\n',
    });
    const read = await crewai.read(dir);
    expect(read.agents.map((agent) => agent.name)).toEqual(["analyst", "market-manager"]);
    expect(read.agents[1]).toMatchObject({ model: "gpt-4o", tools: ["agent_list", "agent_delegate"] });
    expect(read.workflows).toEqual([
      expect.objectContaining({
        name: "market",
        steps: [expect.objectContaining({ agent: "market-manager" })],
      }),
    ]);
  });

  it("makes an AutoGen selector team a coordinating agent, and skips the human", async () => {
    const agent = (name: string) => ({
      provider: "autogen_agentchat.agents.AssistantAgent",
      component_type: "agent",
      config: {
        name,
        model_client: { provider: "x.OpenAIChatCompletionClient", config: { model: "gpt-4o" } },
      },
    });
    const dir = project({
      "team.json": JSON.stringify({
        provider: "autogen_agentchat.teams.SelectorGroupChat",
        component_type: "team",
        config: {
          participants: [
            agent("coder"),
            agent("tester"),
            {
              provider: "autogen_agentchat.agents.UserProxyAgent",
              component_type: "agent",
              config: { name: "human" },
            },
          ],
          model_client: { provider: "x.OpenAIChatCompletionClient", config: { model: "gpt-4o-mini" } },
          selector_prompt: "Pick the tester after the coder.",
        },
      }),
    });
    const read = await autogen.read(join(dir, "team.json"));
    expect(read.agents.map((entry) => entry.name)).toEqual(["coder", "tester", "team-selector"]);
    expect(read.agents[2]?.systemPrompt).toContain("Pick the tester after the coder.");
    expect(read.skipped).toEqual([
      expect.objectContaining({ name: "human", reason: expect.stringMatching(/human in the loop/) }),
    ]);
  });

  it("reports a LangGraph graph that branches instead of guessing its order", async () => {
    const dir = project({
      "langgraph.json": JSON.stringify({ graphs: { flow: "./g.py:graph" } }),
      "g.py":
        'from langgraph.graph import StateGraph, START\nfrom langgraph.prebuilt import create_react_agent\na = create_react_agent("openai:gpt-4o", tools=[])\nb = StateGraph(dict)\nb.add_node("a", a)\nb.add_edge(START, "a")\nb.add_conditional_edges("a", route)\ngraph = b.compile()\n',
    });
    const read = await langgraph.read(join(dir, "langgraph.json"));
    expect(read.agents).toEqual([expect.objectContaining({ name: "a", model: "openai:gpt-4o" })]);
    expect(read.workflows).toEqual([]);
    expect(read.skipped).toEqual([
      expect.objectContaining({
        type: "workflow",
        name: "graph",
        reason: expect.stringMatching(/branches \(add_conditional_edges at line 7\)/),
      }),
    ]);
  });
});
