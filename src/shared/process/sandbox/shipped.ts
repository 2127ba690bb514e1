import { closeSync, constants, openSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { INSIDE } from "./bwrap.ts";

/** A directory the service ships, shown read-only inside every sandbox. */
export interface ShippedDir {
  host: string;
  inside: string;
}

const require = createRequire(import.meta.url);

function packageDir(name: string, from?: string): string | null {
  try {
    return dirname(
      realpathSync(require.resolve(`${name}/package.json`, from ? { paths: [from] } : undefined)),
    );
  } catch {
    return null;
  }
}

/**
 * The Node that runs the service (programs find it first on PATH) and its TypeScript with the native
 * compiler for this platform (the language server of TypeScript files): tools, not the service's data.
 */
export function shippedDirs(): ShippedDir[] {
  const dirs: ShippedDir[] = [];
  try {
    const home = dirname(dirname(realpathSync(process.execPath)));
    if (home !== "/usr" && home !== "/") dirs.push({ host: home, inside: INSIDE.node });
  } catch {
    // No Node of its own to show.
  }
  const typescript = packageDir("typescript");
  if (typescript) {
    dirs.push({ host: typescript, inside: `${INSIDE.modules}/typescript` });
    const native = `@typescript/typescript-${process.platform}-${process.arch}`;
    const nativeDir = packageDir(native, typescript);
    if (nativeDir) dirs.push({ host: nativeDir, inside: `${INSIDE.modules}/${native}` });
  }
  return dirs;
}

/** The shipped directories with a descriptor each, opened once and passed to every sandbox. */
export class ShippedBinds {
  private readonly dirs: ShippedDir[];
  private fds: number[] | undefined;

  constructor(dirs: ShippedDir[]) {
    this.dirs = dirs;
  }

  get nodeBin(): string | null {
    const node = this.dirs.find((dir) => dir.inside === INSIDE.node);
    return node ? join(node.host, "bin") : null;
  }

  descriptors(): Array<{ fd: number; inside: string }> {
    this.fds ??= this.dirs.map((dir) => openSync(dir.host, constants.O_RDONLY | constants.O_DIRECTORY));
    const fds = this.fds;
    return this.dirs.map((dir, index) => ({ fd: fds[index] as number, inside: dir.inside }));
  }

  /** A host path below a shipped directory as the sandbox sees it; null for any other path. */
  insideOf(hostPath: string): string | null {
    for (const dir of this.dirs) {
      if (hostPath === dir.host || hostPath.startsWith(`${dir.host}/`)) {
        return dir.inside + hostPath.slice(dir.host.length);
      }
    }
    return null;
  }

  close(): void {
    for (const fd of this.fds ?? []) closeSync(fd);
    this.fds = undefined;
  }
}
