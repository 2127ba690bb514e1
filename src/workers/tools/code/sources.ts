import { listContained } from "../../../shared/fs/contained-dir.ts";
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
    // Listed only while still inside `dir` (a program may swap a queued directory for a link).
    const entries = await listContained(dir, current);
    if (!entries) continue;
    for (const entry of entries) {
      if (entry.isDirectory && !SKIPPED_DIRS.has(entry.name)) queue.push(entry.path);
      else if (entry.isFile && isSource(entry.name) && files.length < limit) files.push(entry.path);
    }
  }
  return files.sort();
}
