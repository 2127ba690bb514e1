import { readFileSync } from "node:fs";
import fc from "fast-check";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { agentFile, handFile } from "../../../src/workers/config/schema.ts";
import { emptyProject } from "../../../src/workers/migrate/model.ts";
import { mapModel, modelTargets } from "../../../src/workers/migrate/models.ts";
import { planMigration, slug } from "../../../src/workers/migrate/plan.ts";
import { parsePython, stringValue } from "../../../src/workers/migrate/python.ts";
import { toTomlText } from "../../../src/workers/migrate/toml-text.ts";
import { mapTool, snakeCase, toolTargets } from "../../../src/workers/migrate/tools.ts";

const catalog = JSON.parse(
  readFileSync(new URL("../../../src/workers/catalog/catalog.json", import.meta.url), "utf8"),
) as {
  models: Array<{ id: string }>;
};
const MODELS = new Set(catalog.models.map((model) => model.id));

describe("model and tool maps", () => {
  it("maps every source model to an id that is in the catalog", () => {
    for (const target of modelTargets()) expect(MODELS.has(target), target).toBe(true);
  });

  it("keeps the vendor: OpenAI names to OpenAI models, Anthropic to Anthropic", () => {
    expect(mapModel("openai/gpt-4o-2024-08-06", MODELS)).toBe("gpt-4o");
    expect(mapModel("gpt-3.5-turbo", MODELS)).toBe("gpt-4o-mini");
    expect(mapModel("anthropic:claude-3-5-sonnet-20241022", MODELS)).toBe("claude-sonnet-4-6");
    expect(mapModel("claude-3-haiku-20240307", MODELS)).toBe("claude-haiku-4-5");
    expect(mapModel("models/gemini-1.5-flash", MODELS)).toBe("gemini-2.5-flash");
    expect(mapModel("qwen-plus", MODELS)).toBe("qwen-plus");
    expect(mapModel("mystery-model-9000", MODELS)).toBeUndefined();
  });

  it("maps tools as the spec says (that each target is registered: the service test)", () => {
    const ours = new Set([...toolTargets(), "tool::git_status"]);
    expect(mapTool("google_search", ours)).toEqual(["tool::web_search"]);
    expect(mapTool("read_file", ours)).toEqual(["tool::file_read"]);
    expect(mapTool("write_file", ours)).toEqual(["tool::file_write"]);
    expect(mapTool("python_repl", ours)).toEqual(["tool::shell_exec"]);
    expect(mapTool("code_interpreter", ours)).toEqual(["tool::shell_exec"]);
    expect(mapTool("memory", ours)).toEqual(["memory::store", "memory::recall"]);
    expect(mapTool("retriever", ours)).toEqual(["memory::recall"]);
    expect(mapTool("TavilySearchResults", ours)).toEqual(["tool::web_search"]);
    expect(mapTool("git_status", ours)).toEqual(["tool::git_status"]);
    expect(mapTool("jira_create_issue", ours)).toBeUndefined();
    expect(snakeCase("SerperDevTool")).toBe("serper_dev_tool");
  });
});

describe("the files a plan writes", () => {
  it("a long text survives the round trip through TOML, whatever it holds (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 200 }),
        fc.string({ maxLength: 40 }),
        (prompt, name) => {
          const text = toTomlText({ name, system_prompt: `${prompt}\n${prompt}` });
          expect(parse(text)).toEqual({ name, system_prompt: `${prompt}\n${prompt}` });
        },
      ),
    );
  });

  it("gives every agent a usable name and a file the service reads back (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            name: fc.string({ minLength: 1, maxLength: 80 }),
            prompt: fc.string({ maxLength: 300 }),
          }),
          {
            minLength: 1,
            maxLength: 5,
          },
        ),
        (agents) => {
          const project = emptyProject("openclaw", "/src/openclaw.json");
          project.agents = agents.map((agent) => ({
            name: agent.name,
            systemPrompt: agent.prompt || undefined,
            tools: [],
            source: "x",
          }));
          const plan = planMigration(project, { models: MODELS, functions: new Set() });
          const names = new Set<string>();
          for (const file of plan.files) {
            expect(file.path).toMatch(/^agents\/[a-z0-9_-]{1,64}\/agent\.toml$/);
            const read = agentFile.parse(parse(file.content));
            expect(names.has(read.name as string)).toBe(false);
            names.add(read.name as string);
          }
          expect(plan.files.length + plan.skipped.length).toBe(agents.length);
        },
      ),
    );
  });

  it("makes a hand without a task a six-field pulse, and keeps a task's cron as written", () => {
    const project = emptyProject("openfang", "/home");
    project.agents = [{ name: "a", tools: [], source: "x" }];
    project.schedules = [
      { name: "pulse", agent: "a", cron: "0 6 * * *", source: "x" },
      { name: "task", agent: "a", cron: "*/30 * * * *", task: "Check\nthe inbox", source: "x" },
      { name: "orphan", agent: "nobody", cron: "* * * * *", source: "x" },
    ];
    const plan = planMigration(project, { models: MODELS, functions: new Set() });
    const hands = plan.files
      .filter((file) => file.type === "cron")
      .map((file) => handFile.parse(parse(file.content)));
    expect(hands).toEqual([
      { name: "pulse", agent: "a", schedule: "0 0 6 * * *" },
      { name: "task", agent: "a", schedule: "*/30 * * * *", task: "Check\nthe inbox" },
    ]);
    expect(plan.skipped).toEqual([
      expect.objectContaining({ type: "cron", name: "orphan", reason: "no agent nobody" }),
    ]);
  });

  it("slugs are always safe file names (property)", () => {
    fc.assert(
      fc.property(fc.string(), (name) => {
        expect(slug(name)).toMatch(/^[a-z0-9_-]{1,64}$/);
      }),
    );
  });
});

describe("Python source", () => {
  it("reads string literals as Python means them: concatenation, escapes, names", async () => {
    const module = await parsePython(
      "x.py",
      'A = "one\\ntwo"\nB = ("a" "b")\nC = """\ntriple\n"""\nD = A\nE = r"a\\nb"\n',
    );
    const value = (name: string) => stringValue(module, module.assignments.get(name));
    expect(value("A")).toBe("one\ntwo");
    expect(value("B")).toBe("ab");
    expect(value("C")).toBe("\ntriple\n");
    expect(value("D")).toBe("one\ntwo");
    expect(value("E")).toBe("a\\nb");
  });

  it("names the file and line of a syntax error", async () => {
    await expect(parsePython("bad.py", "import os\n\ndef f(:\n    pass\n")).rejects.toThrow(
      "bad.py:3: is not valid Python",
    );
  });
});
