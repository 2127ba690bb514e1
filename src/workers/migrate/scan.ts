import { join } from "node:path";
import { READERS } from "./frameworks/index.ts";
import { FRAMEWORKS } from "./model.ts";
import { isDirectory, listDirectory } from "./project-files.ts";
import type { ScanEntry } from "./schema.ts";

/** The six frameworks looked for in baseDir and each directory directly inside it. */
export function scan(baseDir: string): {
  frameworks: ScanEntry[];
  summary: { scanned: number; found: number; migratable: number };
} {
  const dirs = [baseDir, ...subdirectories(baseDir)];
  const frameworks = FRAMEWORKS.map((framework): ScanEntry => {
    const found = dirs
      .map((dir) => {
        try {
          return READERS[framework].detect(dir);
        } catch {
          return undefined;
        }
      })
      .filter((entry): entry is { configPath: string; version?: string } => entry !== undefined);
    const first = found[0];
    return {
      framework,
      detected: Boolean(first),
      configPath: first?.configPath ?? null,
      version: first?.version ?? null,
      migratable: Boolean(first),
      locations: found.map((entry) => entry.configPath),
    };
  });
  const found = frameworks.filter((entry) => entry.detected).length;
  return { frameworks, summary: { scanned: FRAMEWORKS.length, found, migratable: found } };
}

function subdirectories(dir: string): string[] {
  return listDirectory(dir)
    .filter((entry) => !entry.startsWith(".") || entry === ".openclaw" || entry === ".openfang")
    .filter((entry) => entry !== "node_modules")
    .slice(0, 200)
    .map((entry) => join(dir, entry))
    .filter(isDirectory);
}
