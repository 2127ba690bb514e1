import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { PlannedFile } from "./plan.ts";
import type { ReportItem } from "./report.ts";

export interface WriteTargets {
  /** AGENTOS_HOME: declarative files. */
  home: string;
  /** AGENTOS_DATA_DIR: `data/...` paths (sessions, reports). */
  dataDir: string;
}

/** Where a planned path lands: `data/...` under the data dir, the rest under home. */
export function destination(targets: WriteTargets, path: string): string {
  const target = path.startsWith("data/")
    ? resolve(targets.dataDir, path.slice("data/".length))
    : resolve(targets.home, path);
  const base = path.startsWith("data/") ? resolve(targets.dataDir) : resolve(targets.home);
  if (target !== base && !target.startsWith(base + sep))
    throw new Error(`${path} would land outside ${base}`);
  return target;
}

/** A file a migration of this framework wrote (so this migration may replace it). */
const writtenBy = (framework: string, text: string) =>
  text.startsWith(`# Migrated from ${framework} `) ||
  (text.startsWith('{\n  "agent"') && text.includes(`"framework": "${framework}"`));

/**
 * What each planned file would do: written (new or changed), unchanged (the same bytes are there), or
 * kept (a file written by hand, or by another framework's migration, is in the way: never overwritten).
 */
export function classify(
  targets: WriteTargets,
  framework: string,
  files: PlannedFile[],
): Array<{ file: PlannedFile; target: string; action: "write" | "same" | "keep" }> {
  return files.map((file) => {
    const target = destination(targets, file.path);
    if (!existsSync(target)) return { file, target, action: "write" as const };
    const current = readFileSync(target, "utf8");
    if (current === file.content) return { file, target, action: "same" as const };
    return { file, target, action: writtenBy(framework, current) ? ("write" as const) : ("keep" as const) };
  });
}

/**
 * Writes every file into one temporary directory first, then moves each into place: a failure while
 * writing (a full disk, a permission) leaves nothing half-written, and each move is atomic.
 */
export function writeFiles(
  targets: WriteTargets,
  writes: Array<{ file: PlannedFile; target: string }>,
  id: string,
): ReportItem[] {
  const staging = join(targets.home, `.agentos-migrate-${id}`);
  mkdirSync(staging, { recursive: true });
  try {
    const staged = writes.map(({ file, target }, index) => {
      const temp = join(staging, String(index));
      writeFileSync(temp, file.content, { mode: 0o644 });
      return { file, target, temp };
    });
    for (const { target, temp } of staged) {
      mkdirSync(dirname(target), { recursive: true });
      try {
        renameSync(temp, target);
      } catch {
        // Another filesystem (a data dir elsewhere): write beside the target, then rename there.
        const beside = `${target}.migrating`;
        writeFileSync(beside, readFileSync(temp));
        renameSync(beside, target);
      }
    }
    return staged.map(({ file, target }) => ({
      type: file.type,
      name: file.name,
      path: relative(targets.home, target) || target,
      status: "migrated" as const,
      source: file.source,
    }));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
