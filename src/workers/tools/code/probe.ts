import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open, readlink } from "node:fs/promises";
import { isAbsolute, relative, sep } from "node:path";

/*
 * Whether the workspace holds a file (a project file, the workspace's own formatter or language server),
 * asked without probing the host. access()/stat by path follow links, so a link a program planted in
 * the workspace (node_modules -> /anywhere) made the answer tell whether a host path exists. Here each
 * component is looked at from its opened parent (/proc/self/fd/<dir>/<name>, lstat: no link followed);
 * a link is read and followed by hand only while it stays inside the workspace, as the sandbox would
 * see it (at /workspace, or by the workspace's host path). Anything leading out is simply absent.
 */
const DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const MAX_LINKS = 40;
/** Where sandboxed programs see the workspace: links they make name it so. */
const INSIDE = "/workspace";

const names = (path: string) => path.split("/").filter((name) => name !== "" && name !== ".");

/** An absolute link target as names under the workspace, or null when it points outside. */
function underRoot(root: string, target: string): string[] | null {
  for (const base of [INSIDE, root]) {
    if (target === base) return [];
    if (target.startsWith(`${base}/`)) return names(target.slice(base.length + 1));
  }
  return null;
}

/** The lstat of what `rel` names inside the workspace `root` (a real path), or null if nothing inside. */
export async function statWithin(root: string, rel: string): Promise<Stats | null> {
  const path = isAbsolute(rel) ? relative(root, rel) : rel;
  if (path === ".." || path.startsWith(`..${sep}`)) return null;
  const opened: FileHandle[] = [];
  try {
    opened.push(await open(root, DIR));
    // Names still to walk, the next on top.
    const pending = names(path).reverse();
    let links = 0;
    while (pending.length > 0) {
      const name = pending.pop() as string;
      if (name === "..") {
        if (opened.length === 1) return null;
        await opened.pop()?.close();
        continue;
      }
      const at = `/proc/self/fd/${opened[opened.length - 1]?.fd}/${name}`;
      const info = await lstat(at);
      if (info.isSymbolicLink()) {
        if (++links > MAX_LINKS) return null;
        const target = await readlink(at);
        if (isAbsolute(target)) {
          const inside = underRoot(root, target);
          if (!inside) return null;
          while (opened.length > 1) await opened.pop()?.close();
          pending.push(...inside.reverse());
        } else pending.push(...names(target).reverse());
        continue;
      }
      if (pending.length === 0) return info;
      if (!info.isDirectory()) return null;
      opened.push(await open(at, DIR));
    }
    return await (opened[opened.length - 1] as FileHandle).stat();
  } catch {
    return null;
  } finally {
    for (const handle of opened) await handle.close().catch(() => {});
  }
}

/** Whether `rel` is a regular file inside the workspace. */
export const isFileWithin = async (root: string, rel: string) =>
  (await statWithin(root, rel))?.isFile() ?? false;

/** Whether `rel` is an executable regular file inside the workspace. */
export async function isExecutableWithin(root: string, rel: string): Promise<boolean> {
  const info = await statWithin(root, rel);
  return Boolean(info?.isFile() && info.mode & 0o111);
}
