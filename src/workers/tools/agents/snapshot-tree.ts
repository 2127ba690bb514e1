import { constants, type Stats } from "node:fs";
import { chmod, copyFile, lstat, mkdir, open, readdir, readlink, symlink } from "node:fs/promises";
import { join, relative } from "node:path";
import { badRequest } from "../../../shared/errors.ts";

/*
 * Snapshots keep files, directories and links only. A FIFO, socket or device node has no content to
 * keep, and copying one is where things went wrong: Node's cp failed on it (a 500), and opening a FIFO
 * blocks. Modes keep their permission bits only: a setuid or setgid bit on a copy the service (root)
 * makes would sit on a root-owned file until the copy is handed to the workspace's owner, and a sticky
 * bit means nothing in a workspace of one owner.
 */
const PERMISSIONS = 0o777;
const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

const kept = (info: Stats) => info.isFile() || info.isDirectory() || info.isSymbolicLink();

function kind(info: Stats): string {
  if (info.isFIFO()) return "a FIFO";
  if (info.isSocket()) return "a socket";
  if (info.isBlockDevice() || info.isCharacterDevice()) return "a device node";
  return "a special file";
}

/** A path too long for the host (nested past PATH_MAX) as a 400 instead of the service's own failure. */
async function tooDeep<T>(work: () => Promise<T>, shown: () => string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if ((error as { code?: string }).code === "ENAMETOOLONG")
      throw badRequest(`${shown()} is nested too deep to copy: remove its deepest directories first`);
    throw error;
  }
}

/**
 * Checks a tree the service just made (a snapshot's copy, out of any program's reach): a special file in
 * it is a 400 naming it (the caller drops the copy), and set-id and sticky bits are cleared.
 */
export async function checkTree(tree: string): Promise<void> {
  const walk = async (dir: string): Promise<void> => {
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      const info = await lstat(path);
      if (!kept(info))
        throw badRequest(
          `Your workspace holds ${kind(info)} at ${relative(tree, path)}: snapshots keep only files, directories and links, so remove it first`,
        );
      if (!info.isSymbolicLink() && info.mode & ~PERMISSIONS & 0o7777)
        await chmod(path, info.mode & PERMISSIONS);
      if (info.isDirectory()) await walk(path);
    }
  };
  await tooDeep(
    () => walk(tree),
    () => "Your workspace",
  );
}

/**
 * Copies `from`'s content to `to` (created), leaving out `.tmp` at the top: links are copied as links
 * (never followed), special files are left out, and modes keep their permission bits only. A file is
 * opened without following a link and without blocking, and copied only if it is a regular file.
 */
export async function copyTree(from: string, to: string): Promise<void> {
  const walk = async (source: string, target: string, top: boolean): Promise<void> => {
    for (const name of await readdir(source)) {
      if (top && name === ".tmp") continue;
      const [path, copy] = [join(source, name), join(target, name)];
      const info = await lstat(path);
      if (info.isSymbolicLink()) await symlink(await readlink(path), copy);
      else if (info.isDirectory()) {
        await mkdir(copy);
        await walk(path, copy, false);
        await chmod(copy, info.mode & PERMISSIONS);
      } else if (info.isFile()) await copyRegular(path, copy);
    }
  };
  await mkdir(to, { recursive: true });
  await tooDeep(
    () => walk(from, to, true),
    () => "The snapshot",
  );
}

async function copyRegular(path: string, copy: string): Promise<void> {
  const handle = await open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) return;
    // Through the opened descriptor: the very file checked, whatever the path names by now.
    await copyFile(`/proc/self/fd/${handle.fd}`, copy, constants.COPYFILE_EXCL);
    await chmod(copy, info.mode & PERMISSIONS);
  } finally {
    await handle.close();
  }
}
