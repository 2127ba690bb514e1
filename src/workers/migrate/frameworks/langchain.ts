import { existsSync } from "node:fs";
import { join } from "node:path";
import { emptyProject, type FrameworkReader } from "../model.ts";
import { dependsOn, pythonPackageVersion } from "../project-files.ts";
import { readPythonAgents } from "../python-agents.ts";
import { parseProject, projectDir, readDotEnv } from "./python-project.ts";

const usesLangChain = (text: string) => /\b(from|import)\s+langchain/.test(text);

export const langchain: FrameworkReader = {
  name: "langchain",
  detect(dir) {
    const marker = ["langchain.config.json", ".langchain"].some((name) => existsSync(join(dir, name)));
    if (!marker && !dependsOn(dir, "langchain") && !dependsOn(dir, "langchain-core")) return undefined;
    return {
      configPath: dir,
      version: pythonPackageVersion(dir, "langchain") ?? pythonPackageVersion(dir, "langchain-core"),
    };
  },
  async read(configPath) {
    const dir = projectDir(configPath);
    const project = emptyProject("langchain", dir);
    project.version = pythonPackageVersion(dir, "langchain") ?? pythonPackageVersion(dir, "langchain-core");
    const found = readPythonAgents(await parseProject(dir, project, usesLangChain));
    project.agents.push(...found.agents.map(({ variable: _variable, ...agent }) => agent));
    project.tools.push(...found.tools);
    project.skipped.push(...found.skipped);
    readDotEnv(project, dir);
    return project;
  },
};
