import { constants, existsSync, type Stats } from "node:fs";
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
  return lstatEach(readFrom, names, (name, info) => ({
    name,
    path: `${shownAs}${sep}${name}`,
    isDirectory: info.isDirectory(),
    isFile: info.isFile(),
    size: info.size,
    allocated: info.blocks * 512,
  }));
}

/** lstat calls in flight at once for one listing. */
export const LSTAT_BATCH = 32;

/**
 * What `describe` makes of the lstat of each of `names` in the directory `dir` (entries gone meanwhile
 * left out), a batch at a time. A program may fill one directory of its workspace with hundreds of
 * thousands of empty files (each is cheap against its quota); one lstat per name all at once held as
 * many promises and Stats, took gigabytes of the service's memory and stalled its event loop for tens of
 * seconds, for everyone.
 */
export async function lstatEach<T>(
  dir: string,
  names: readonly string[],
  describe: (name: string, stats: Stats) => T,
): Promise<T[]> {
  const found: T[] = [];
  for (let start = 0; start < names.length; start += LSTAT_BATCH) {
    const batch = names.slice(start, start + LSTAT_BATCH);
    const stats = await Promise.all(batch.map((name) => lstat(`${dir}/${name}`).catch(() => null)));
    stats.forEach((info, index) => {
      if (info) found.push(describe(batch[index] as string, info));
    });
  }
  return found;
}

/** Without /proc (not Linux as we ship it): by path, as well as that can be done. */
function listByPath(dir: string): Promise<ContainedEntry[] | null> {
  return describe(dir, dir).catch(() => null);
}
