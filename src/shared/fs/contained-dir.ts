import { constants, existsSync } from "node:fs";
import { lstat, open, readdir, readlink } from "node:fs/promises";
import { sep } from "node:path";

/** An entry of a listed directory, as lstat saw it (links not followed). */
export interface ContainedEntry {
  name: string;
  /** The entry's path under the directory asked for. */
  path: string;
  isDirectory: boolean;
  isFile: boolean;
  size: number;
  /** Bytes allocated on disk. */
  allocated: number;
}

const viaDescriptors = existsSync("/proc/self/fd");

/**
 * The entries of `dir` if, once opened, it is `root` or inside it; null otherwise (or when it cannot be
 * read). Walks of a workspace run while its programs do, and a program may swap a directory the walk
 * has queued (or one above it) for a link to anywhere: so the directory is opened first, where it
 * actually is is read from the open descriptor, and it is listed and its entries examined through that
 * descriptor, never by the path again. `root` must be a real path.
 */
export async function listContained(root: string, dir: string): Promise<ContainedEntry[] | null> {
  if (!viaDescriptors) return listByPath(dir);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    return null;
  }
  try {
    const opened = `/proc/self/fd/${handle.fd}`;
    const actual = await readlink(opened);
    if (actual !== root && !actual.startsWith(root + sep)) return null;
    return await describe(opened, dir);
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

async function describe(readFrom: string, shownAs: string): Promise<ContainedEntry[]> {
  const names = await readdir(readFrom);
  const entries = await Promise.all(
    names.map(async (name) => {
      const info = await lstat(`${readFrom}/${name}`).catch(() => null);
      if (!info) return null;
      return {
        name,
        path: `${shownAs}${sep}${name}`,
        isDirectory: info.isDirectory(),
        isFile: info.isFile(),
        size: info.size,
        allocated: info.blocks * 512,
      };
    }),
  );
  return entries.filter((entry): entry is ContainedEntry => entry !== null);
}

/** Without /proc (not Linux as we ship it): by path, as well as that can be done. */
function listByPath(dir: string): Promise<ContainedEntry[] | null> {
  return describe(dir, dir).catch(() => null);
}
