import { constants, type Stats } from "node:fs";
import { type FileHandle, lchown, lstat, mkdir, open, readdir, readlink, unlink } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import { badRequest, notFound } from "../../shared/errors.ts";
import { lstatEach } from "../../shared/fs/contained-dir.ts";
import { workspaceOwner } from "../../shared/process/sandbox/owner.ts";
import { shown } from "./sandbox.ts";

/*
 * File I/O inside a workspace whose sandboxed programs may swap any path component for a link to
 * anywhere at any time. Paths are walked from the root one component at a time through
 * `/proc/self/fd/<dir>/<name>` (openat) with O_NOFOLLOW: no link is followed, and a directory cannot be
 * swapped once opened. `full` is what resolveInside answered (no links then); a link that appears later
 * is refused. What the service (as root) creates goes to the workspace's owner, so its programs can change it.
 */
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
/** O_NONBLOCK: a FIFO planted in the workspace must not hang the service on open. */
const READ = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const DIR = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const DEFAULT_MAX_BYTES = 100_000_000;

const within = (root: string, path: string) => path === root || path.startsWith(root + sep);
const at = (dir: FileHandle, name: string) => `/proc/self/fd/${dir.fd}/${name}`;

/** The fd's real location must be inside root: whatever was opened, by whatever path, is checked. */
async function checked(root: string, handle: FileHandle, full: string): Promise<FileHandle> {
  const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => "");
  if (within(root, real)) return handle;
  await handle.close();
  throw badRequest(`Path ${shown(root, full)} leads outside your workspace`);
}

const errno = (error: unknown) =>
  error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;

/** Open-time errors as 4xx the model can act on; any other is the service's own failure. */
function refusal(root: string, full: string, error: unknown): unknown {
  const path = shown(root, full);
  const code = errno(error);
  if (code === "ENOENT") return notFound(`No file or directory ${path} in your workspace`);
  if (code === "ELOOP")
    return badRequest(
      `Path ${path} goes through a link: links are not followed here (one could lead outside your workspace)`,
    );
  if (code === "ENOTDIR") return badRequest(`Path ${path} goes through something that is not a directory`);
  if (code === "EISDIR") return badRequest(`${path} is a directory`);
  if (code === "EACCES" || code === "EPERM" || code === "ENXIO")
    return badRequest(`${path} cannot be opened (${code})`);
  return error;
}

const opened = (root: string, full: string, path: string, flags: number) =>
  open(path, flags).catch((error: unknown) => Promise.reject(refusal(root, full, error)));

/** The names from root down to `full`, which must be inside root. */
function components(root: string, full: string): string[] {
  const names = relative(root, full).split(sep).filter(Boolean);
  if (names.includes("..")) throw badRequest(`Path ${full} is outside your workspace`);
  return names;
}

/** The directory `full`, opened by walking from root without following links; `create` makes what is missing. */
async function openDirectory(root: string, full: string, create: boolean): Promise<FileHandle> {
  const owner = create ? workspaceOwner(root) : null;
  let dir = await checked(root, await opened(root, root, root, DIR), root);
  try {
    for (const name of components(root, full)) {
      const made = create && (await madeDirectory(root, full, at(dir, name)));
      const next = await opened(root, full, at(dir, name), DIR);
      await dir.close();
      dir = next;
      if (made && owner) await dir.chown(owner.uid, owner.gid);
    }
    return await checked(root, dir, full);
  } catch (error) {
    await dir.close().catch(() => {});
    throw error;
  }
}

/** Whether this call created the directory (mkdir does not follow a link in the last component). */
async function madeDirectory(root: string, full: string, path: string): Promise<boolean> {
  try {
    await mkdir(path);
    return true;
  } catch (error) {
    if (errno(error) === "EEXIST") return false;
    throw refusal(root, full, error);
  }
}

/** The file, created when missing; O_EXCL tells one this call creates (for the owner) from one that was there. */
async function createOrOpen(root: string, full: string, path: string, flags: number) {
  try {
    return { handle: await open(path, flags | O_CREAT | O_EXCL), created: true };
  } catch (error) {
    if (errno(error) !== "EEXIST") throw refusal(root, full, error);
  }
  return { handle: await opened(root, full, path, flags), created: false };
}

/** Runs `work` on the opened entry `full` (a file or directory), closing it after. */
async function withOpened<T>(root: string, full: string, work: (handle: FileHandle) => Promise<T>) {
  const handle =
    full === root
      ? await openDirectory(root, root, false)
      : await inDirectory(root, full, false, (dir) => opened(root, full, at(dir, basename(full)), READ));
  try {
    return await work(await checked(root, handle, full));
  } finally {
    await handle.close().catch(() => {});
  }
}

/** Runs `work` with `full`'s parent directory open (created first when `create`). */
async function inDirectory<T>(
  root: string,
  full: string,
  create: boolean,
  work: (dir: FileHandle) => Promise<T>,
): Promise<T> {
  if (full === root) throw badRequest("path must name a file, not the workspace itself");
  const dir = await openDirectory(root, dirname(full), create);
  try {
    return await work(dir);
  } finally {
    await dir.close();
  }
}

/** Stats of `full` as opened (never of a link's target). */
export function statInside(root: string, full: string): Promise<Stats> {
  return withOpened(root, full, (handle) => handle.stat());
}

/** Up to `length` bytes of a regular file from `offset`, with its size. */
export function readRangeInside(root: string, full: string, offset: number, length: number) {
  return withOpened(root, full, async (handle) => {
    const { size } = await regular(root, full, handle);
    return { bytes: await readAt(handle, offset, Math.min(length, size - offset)), size };
  });
}

/** A whole regular file, refused when larger than `maxBytes`. */
export function readInside(root: string, full: string, maxBytes = DEFAULT_MAX_BYTES): Promise<Buffer> {
  return withOpened(root, full, async (handle) => {
    const { size } = await regular(root, full, handle);
    // One byte more than allowed tells a file that grew since fstat.
    const bytes = await readAt(handle, 0, Math.min(size, maxBytes) + 1);
    if (bytes.length > maxBytes) throw badRequest(`${shown(root, full)} is larger than ${maxBytes} bytes`);
    return bytes;
  });
}

async function readAt(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  const bytes = Buffer.alloc(Math.max(0, length));
  let filled = 0;
  while (filled < bytes.length) {
    const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, offset + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return bytes.subarray(0, filled);
}

async function regular(root: string, full: string, handle: FileHandle): Promise<Stats> {
  const info = await handle.stat();
  if (!info.isFile()) throw badRequest(`${shown(root, full)} is not a file`);
  return info;
}

/**
 * Writes (or appends) `data` to the file `full`, creating it and its parent directories as needed. The
 * file is truncated only after it was checked, so a refused write changes nothing.
 */
export function writeInside(
  root: string,
  full: string,
  data: string | Uint8Array,
  options: { append?: boolean } = {},
) {
  const mode = O_WRONLY | O_NOFOLLOW | O_NONBLOCK | (options.append ? O_APPEND : 0);
  return inDirectory(root, full, true, async (dir) => {
    const { handle, created } = await createOrOpen(root, full, at(dir, basename(full)), mode);
    try {
      await regular(root, full, await checked(root, handle, full));
      const owner = created ? workspaceOwner(root) : null;
      if (owner) await handle.chown(owner.uid, owner.gid);
      if (!options.append) await handle.truncate(0);
      await handle.writeFile(data);
    } finally {
      await handle.close().catch(() => {});
    }
  });
}

/**
 * The entries of the directory `full` with their lstat, read through its opened descriptor: a directory
 * swapped for a link meanwhile is refused, never listed. Entries gone while listing are left out. With
 * `first`, a directory of more names gives only the first that many (readdir's order: by bytes, sorted
 * off the event loop), so a directory of a million empty files costs a listing of names, not a million
 * lstat calls (nor a sort of them by locale, which held the event loop for seconds).
 */
export async function listInside(
  root: string,
  full: string,
  first = Number.POSITIVE_INFINITY,
): Promise<Array<{ name: string; stats: Stats }>> {
  const dir = await openDirectory(root, full, false);
  try {
    const names = await readdir(`/proc/self/fd/${dir.fd}`);
    return await lstatEach(`/proc/self/fd/${dir.fd}`, names.slice(0, first), (name, stats) => ({
      name,
      stats,
    }));
  } finally {
    await dir.close();
  }
}

/** Creates the directory `full` and its missing parents, each handed to the workspace's owner. */
export async function makeDirectoryInside(root: string, full: string): Promise<void> {
  await (await openDirectory(root, full, true)).close();
}

/** Removes the file (or link) `full` from its checked directory; a missing one is no error. */
export function removeInside(root: string, full: string): Promise<void> {
  return inDirectory(root, full, false, async (dir) => {
    await unlink(at(dir, basename(full))).catch((error: unknown) => {
      if (errno(error) !== "ENOENT") throw refusal(root, full, error);
    });
  });
}

/**
 * Hands a tree the service made (a copy) to the owner of the workspace at `root`: links themselves,
 * never their targets. Only for a tree no sandboxed program can reach yet (lchown follows parents).
 */
export async function chownTree(root: string, tree: string): Promise<void> {
  const owner = workspaceOwner(root);
  if (!owner) return;
  const walk = async (path: string): Promise<void> => {
    await lchown(path, owner.uid, owner.gid);
    if (!(await lstat(path)).isDirectory()) return;
    for (const name of await readdir(path)) await walk(join(path, name));
  };
  await walk(tree);
}
