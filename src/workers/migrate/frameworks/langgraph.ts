import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { emptyProject, type FrameworkReader } from "../model.ts";
import { isDirectory, pythonPackageVersion, readJsonFile } from "../project-files.ts";
import { readPythonAgents, readStateGraphs } from "../python-agents.ts";
import { parseProject, projectDir, readDotEnv } from "./python-project.ts";

interface LangGraphJson {
  graphs?: Record<string, string>;
  env?: string | Record<string, string>;
}

export const langgraph: FrameworkReader = {
  name: "langgraph",
  detect(dir) {
    const file = join(dir, "langgraph.json");
    if (!existsSync(file)) return undefined;
    return { configPath: file, version: pythonPackageVersion(dir, "langgraph") };
  },
  async read(configPath) {
    const file = isDirectory(configPath) ? join(configPath, "langgraph.json") : configPath;
    const dir = projectDir(file);
    const config = readJsonFile(file) as LangGraphJson;
    const project = emptyProject("langgraph", file);
    project.version = pythonPackageVersion(dir, "langgraph");
    const modules = await parseProject(dir, project, (text) =>
      /\b(from|import)\s+lang(graph|chain)/.test(text),
    );
    const found = readPythonAgents(modules);
    // A graph of langgraph.json that is an agent takes the graph's name (the name clients used).
    for (const [graphName, target] of Object.entries(config.graphs ?? {})) {
      const variable = String(target).split(":").at(-1);
      const agent = found.agents.find((candidate) => candidate.variable === variable);
      if (agent) agent.name = graphName;
    }
    const agentVars = new Map(
      found.agents.filter((agent) => agent.variable).map((agent) => [agent.variable as string, agent.name]),
    );
    const graphs = readStateGraphs(modules, agentVars);
    for (const [graphName, target] of Object.entries(config.graphs ?? {})) {
      const workflow = graphs.workflows.find(
        (candidate) => candidate.variable === String(target).split(":").at(-1),
      );
      if (workflow) workflow.name = graphName;
    }
    project.agents.push(...found.agents.map(({ variable: _variable, ...agent }) => agent));
    project.tools.push(...found.tools);
    project.workflows.push(...graphs.workflows.map(({ variable: _variable, ...workflow }) => workflow));
    project.skipped.push(...found.skipped, ...graphs.skipped);
    if (typeof config.env === "string") readDotEnv(project, resolve(dir), config.env);
    else readDotEnv(project, dir);
    return project;
  },
};
