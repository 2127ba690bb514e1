import { dirname, join } from "node:path";
import { MigrationInputError, type SourceProject } from "../model.ts";
import { envFileSecrets, isDirectory, pythonFiles, readText } from "../project-files.ts";
import { type PythonModule, parsePython } from "../python.ts";

/** The project directory of a config path (a file's folder, or the directory itself). */
export const projectDir = (configPath: string) =>
  isDirectory(configPath) ? configPath : dirname(configPath);

/**
 * Every Python file of the project, parsed. A file that does not parse is an error of the report (with
 * its line), not the end of the migration: the other files still count.
 */
export async function parseProject(
  dir: string,
  project: SourceProject,
  limitTo?: (text: string) => boolean,
): Promise<PythonModule[]> {
  const modules: PythonModule[] = [];
  for (const file of pythonFiles(dir)) {
    const text = readText(file);
    if (limitTo && !limitTo(text)) continue;
    try {
      modules.push(await parsePython(file, text));
    } catch (error) {
      if (!(error instanceof MigrationInputError)) throw error;
      project.skipped.push({ type: "agent", name: file, reason: error.message, source: file });
    }
  }
  return modules;
}

export function readDotEnv(project: SourceProject, dir: string, name = ".env"): void {
  project.secrets.push(...envFileSecrets(join(dir, name)));
}
