import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { type Document, isMap, LineCounter } from "yaml";
import { parseYamlFile } from "../../../shared/yaml-file.ts";
import { emptyProject, type FrameworkReader, MigrationInputError, type SourceProject } from "../model.ts";
import {
  dependsOn,
  dotEnv,
  isDirectory,
  listDirectory,
  pythonFiles,
  pythonPackageVersion,
  readText,
} from "../project-files.ts";
import {
  argument,
  calleeName,
  calls,
  decoratedFunctions,
  keywordArgs,
  lineOf,
  listItems,
  type PythonModule,
  parsePython,
  resolve,
  returned,
  stringValue,
} from "../python.ts";
import { readDotEnv } from "./python-project.ts";

interface AgentYaml {
  role?: string;
  goal?: string;
  backstory?: string;
  llm?: string;
  tools?: string[];
  allow_delegation?: boolean;
}
interface TaskYaml {
  description?: string;
  expected_output?: string;
  agent?: string;
}

/** `config/agents.yaml` of a CrewAI project: at its root, or in `src/<package>/` as `crewai create` lays it out. */
function findConfigDir(dir: string): string | undefined {
  if (existsSync(join(dir, "config", "agents.yaml"))) return join(dir, "config");
  if (existsSync(join(dir, "agents.yaml"))) return dir;
  for (const entry of listDirectory(join(dir, "src"))) {
    const candidate = join(dir, "src", entry, "config");
    if (existsSync(join(candidate, "agents.yaml"))) return candidate;
  }
  return undefined;
}

export const crewai: FrameworkReader = {
  name: "crewai",
  detect(dir) {
    const config = findConfigDir(dir);
    if (!config && !dependsOn(dir, "crewai")) return undefined;
    return {
      configPath: config ? join(config, "agents.yaml") : dir,
      version: pythonPackageVersion(dir, "crewai"),
    };
  },
  async read(configPath) {
    const configDir = isDirectory(configPath) ? findConfigDir(configPath) : dirname(configPath);
    if (!configDir)
      throw new MigrationInputError(configPath, "has no config/agents.yaml (CrewAI's agents file)");
    const root = projectRoot(configDir);
    const project = emptyProject("crewai", join(configDir, "agents.yaml"));
    project.version = pythonPackageVersion(root, "crewai");
    const agents = readYaml<Record<string, AgentYaml>>(join(configDir, "agents.yaml"));
    const tasksFile = join(configDir, "tasks.yaml");
    const tasks = existsSync(tasksFile) ? readYaml<Record<string, TaskYaml>>(tasksFile) : {};
    const code = await readCrewCode(dirname(configDir), project);
    // CrewAI's own default: the MODEL (or OPENAI_MODEL_NAME) variable, else gpt-4o-mini.
    const env = dotEnv(join(root, ".env"));
    const defaultModel = env.get("MODEL")?.value ?? env.get("OPENAI_MODEL_NAME")?.value ?? "gpt-4o-mini";
    for (const [key, agent] of Object.entries(agents)) {
      const fromCode = code.agents.get(key);
      project.agents.push({
        name: key,
        description: oneLine(agent.role),
        model: fromCode?.llm ?? agent.llm ?? defaultModel,
        systemPrompt: persona(agent),
        tools: [...(agent.tools ?? []), ...(fromCode?.tools ?? [])],
        source: `${project.configPath} (${key})`,
      });
    }
    const steps = Object.entries(tasks).map(([key, task]) => ({
      name: key,
      agent: task.agent ?? code.taskAgents.get(key) ?? "",
      task: [
        task.description?.trim(),
        task.expected_output ? `Expected output: ${task.expected_output.trim()}` : "",
      ]
        .filter(Boolean)
        .join("\n\n"),
    }));
    const crewName = code.crewName ?? "crew";
    if (steps.length === 0)
      project.skipped.push({
        type: "workflow",
        name: crewName,
        reason: "tasks.yaml has no tasks",
        source: tasksFile,
      });
    else if (code.process === "hierarchical")
      addManager(project, crewName, steps, code.managerLlm ?? defaultModel);
    else
      project.workflows.push({
        name: crewName,
        description: "CrewAI crew, sequential process",
        steps,
        source: code.crewSource ?? tasksFile,
      });
    project.tools.push(...code.tools);
    readDotEnv(project, root);
    return project;
  },
};

/** A hierarchical crew: a manager agent that delegates each task to the crew's agents, run as one step. */
function addManager(
  project: SourceProject,
  crewName: string,
  steps: Array<{ name: string; agent: string; task: string }>,
  llm?: string,
): void {
  const manager = `${crewName}-manager`;
  const members = [...new Set(steps.map((step) => step.agent))].join(", ");
  project.agents.push({
    name: manager,
    description: `Manages the ${crewName} crew`,
    model: llm,
    systemPrompt: `You manage a crew of agents (${members}). Plan the work, delegate each task to the agent best suited with tool::agent_delegate (find them with tool::agent_list), check their results, and give the final answer.`,
    tools: ["agent_list", "agent_delegate"],
    source: `${project.configPath} (hierarchical process)`,
  });
  project.workflows.push({
    name: crewName,
    description: "CrewAI crew, hierarchical process (a manager agent delegates)",
    steps: [
      {
        name: "manage",
        agent: manager,
        task: steps.map((step, index) => `${index + 1}. ${step.task}`).join("\n\n"),
      },
    ],
    source: project.configPath,
  });
}

function persona(agent: AgentYaml): string {
  return [
    agent.role ? `You are ${agent.role.trim()}.` : "",
    agent.backstory?.trim() ?? "",
    agent.goal ? `Your goal: ${agent.goal.trim()}` : "",
  ]
    .filter(Boolean)
    .join("\n\n");
}

const oneLine = (text: string | undefined) => text?.replace(/\s+/g, " ").trim();

function projectRoot(configDir: string): string {
  // config/ → the package (src/<name>/) → src/ → the project; or config/ → the project.
  const parent = dirname(configDir);
  return dirname(parent).endsWith("src") ? dirname(dirname(parent)) : parent;
}

function readYaml<T>(file: string): T {
  const lineCounter = new LineCounter();
  let document: Document;
  try {
    document = parseYamlFile(readText(file), lineCounter);
  } catch (error) {
    if (error instanceof MigrationInputError) throw error;
    throw new MigrationInputError(file, (error as Error).message);
  }
  const error = document.errors[0];
  if (error)
    throw new MigrationInputError(
      file,
      `is not valid YAML: ${error.message.split("\n")[0]}`,
      lineCounter.linePos(error.pos[0]).line,
    );
  if (!isMap(document.contents)) throw new MigrationInputError(file, "must map names to definitions");
  return document.toJS() as T;
}

interface CrewCode {
  agents: Map<string, { tools: string[]; llm?: string }>;
  taskAgents: Map<string, string>;
  tools: SourceProject["tools"];
  process?: string;
  managerLlm?: string;
  crewName?: string;
  crewSource?: string;
}

/** crew.py and the project's tools: each @agent's tools and llm, @task's agent, the crew's process. */
async function readCrewCode(packageDir: string, project: SourceProject): Promise<CrewCode> {
  const code: CrewCode = { agents: new Map(), taskAgents: new Map(), tools: [] };
  for (const file of pythonFiles(packageDir)) {
    let module: PythonModule;
    try {
      module = await parsePython(file, readText(file));
    } catch (error) {
      if (!(error instanceof MigrationInputError)) throw error;
      project.skipped.push({ type: "agent", name: file, reason: error.message, source: file });
      continue;
    }
    for (const { decorator, fn } of decoratedFunctions(module, new Set(["agent", "task", "crew"]))) {
      const name = fn.childForFieldName("name")?.text ?? "";
      const value = resolve(module, returned(fn));
      if (value?.type !== "call") continue;
      if (decorator === "agent") {
        const tools = listItems(module, argument(value, ["tools"])).map((item) => {
          const made = resolve(module, item);
          return made?.type === "call" ? (calleeName(made) ?? made.text) : item.text;
        });
        const llm = argument(value, ["llm"]);
        const llmCall = resolve(module, llm);
        const model =
          stringValue(module, llm) ??
          (llmCall?.type === "call" ? stringValue(module, argument(llmCall, ["model"], 0)) : undefined);
        code.agents.set(name, { tools, llm: model });
      } else if (decorator === "task") {
        const agent = argument(value, ["agent"])?.text.match(/self\.(\w+)\(/)?.[1];
        if (agent) code.taskAgents.set(name, agent);
      } else {
        const process = argument(value, ["process"])?.text.split(".").at(-1);
        code.process = process;
        code.managerLlm = stringValue(module, argument(value, ["manager_llm"]));
        code.crewName = classNameOf(fn) ?? name;
        code.crewSource = lineOf(module, fn);
      }
    }
    for (const cls of module.root.descendantsOfType("class_definition")) {
      const bases = cls.childForFieldName("superclasses")?.text ?? "";
      if (!/\bBaseTool\b/.test(bases)) continue;
      const fields = new Map<string, string>();
      for (const assignment of cls.childForFieldName("body")?.descendantsOfType("assignment") ?? []) {
        const left = assignment.childForFieldName("left")?.text;
        const text = stringValue(module, assignment.childForFieldName("right") ?? undefined);
        if (left && text !== undefined) fields.set(left, text);
      }
      const className = cls.childForFieldName("name")?.text ?? "tool";
      code.tools.push({
        name: className,
        description: fields.get("description") ?? fields.get("name"),
        source: lineOf(module, cls),
      });
    }
    for (const call of calls(module, new Set(["Crew"]))) {
      if (code.process) break;
      code.process = keywordArgs(call).get("process")?.text.split(".").at(-1);
    }
  }
  return code;
}

function classNameOf(fn: import("web-tree-sitter").Node): string | undefined {
  let node = fn.parent;
  while (node && node.type !== "class_definition") node = node.parent;
  const name = node?.childForFieldName("name")?.text;
  return name
    ? name
        .replace(/Crew$/, "")
        .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
        .toLowerCase() || name
    : undefined;
}
