import { readdirSync } from "node:fs";
import { join } from "node:path";
import { readRegularFile } from "../../shared/fs/regular-file.ts";
import { parseYamlFile } from "../../shared/yaml-file.ts";

export interface WorkflowFile {
  path: string;
  definition: unknown;
}

/** `workflows/*.yaml` (and `.yml`) under `directory`; a file that is not YAML is reported and skipped. */
export function loadWorkflowFiles(directory: string, warn: (message: string) => void): WorkflowFile[] {
  const folder = join(directory, "workflows");
  let names: string[];
  try {
    names = readdirSync(folder)
      .filter((name) => /\.ya?ml$/i.test(name))
      .sort();
  } catch {
    return [];
  }
  const files: WorkflowFile[] = [];
  for (const name of names) {
    const path = join(folder, name);
    try {
      const document = parseYamlFile(readRegularFile(path));
      const [error] = document.errors;
      if (error) throw error;
      files.push({ path, definition: document.toJS() });
    } catch (error) {
      warn(`Skipping ${path}: ${(error as Error).message}`);
    }
  }
  return files;
}
