import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { isSource } from "./analyze.ts";

const MAX_FILES = 2000;
const SKIPPED_DIRS = new Set([
  ".git",
  "node_modules",
  ".tmp",
  "dist",
  "build",
  "target",
  "__pycache__",
  ".venv",
]);

/** Source files under `dir` (dependencies and build output skipped), at most MAX_FILES. */
export async function sourceFiles(dir: string, limit = MAX_FILES): Promise<string[]> {
  const files: string[] = [];
  const queue = [dir];
  while (queue.length > 0 && files.length < limit) {
    const current = queue.shift() as string;
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) queue.push(full);
      else if (entry.isFile() && isSource(entry.name) && files.length < limit) files.push(full);
    }
  }
  return files.sort();
}
