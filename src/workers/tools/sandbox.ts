import { createHash } from "node:crypto";
import { lstat, mkdir, realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { badRequest, notFound } from "../../shared/errors.ts";

/**
 * The workspace directory of an agent under `<dataDir>/workspaces/`. Ids that are not plain names get a
 * hash, so no id can name a path of its own (`..`, `/`, NUL).
 */
export function workspaceDir(dataDir: string, agentId: string): string {
  return join(dataDir, "workspaces", dirName(agentId));
}

/** Where an agent's workspace snapshots are kept (outside the workspace, so the agent cannot alter them). */
export function snapshotsDir(dataDir: string, agentId: string): string {
  return join(dataDir, "snapshots", dirName(agentId));
}

function dirName(agentId: string): string {
  return /^[A-Za-z0-9_-]{1,128}$/.test(agentId)
    ? agentId
    : `id-${createHash("sha256").update(agentId).digest("hex").slice(0, 32)}`;
}

export async function ensureDir(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  return realpath(dir);
}

const within = (root: string, path: string) => path === root || path.startsWith(root + sep);

/**
 * `userPath` (relative to the workspace, or absolute inside it) as a real path inside `root`. `..` is
 * refused outright; symlinks are resolved (of the path itself when it exists, else of its nearest
 * existing ancestor) and must stay inside, so a link pointing out of the workspace is refused, not
 * followed. `root` must be a real path (ensureDir's answer).
 */
export async function resolveInside(root: string, userPath: string): Promise<string> {
  if (userPath.includes("\0")) throw badRequest("path must not contain NUL");
  let rel = userPath.trim() === "" ? "." : userPath;
  if (isAbsolute(rel)) {
    if (!within(root, rel)) {
      throw badRequest(`Path ${userPath} is outside your workspace: give a path relative to the workspace`);
    }
    rel = relative(root, rel) || ".";
  }
  if (rel.split(/[\\/]+/).includes(".."))
    throw badRequest(`Path ${userPath} is refused: ".." is not allowed`);
  const full = join(root, rel);
  let probe = full;
  while (!(await exists(probe))) probe = dirname(probe);
  // One answer for a link out of the workspace and a link to nothing: two would tell a program that
  // plants links which host paths exist.
  const refused = () =>
    badRequest(`Path ${userPath} leads outside your workspace or to nothing (through a link)`);
  const real = await realpath(probe).catch(() => {
    throw refused();
  });
  if (!within(root, real)) throw refused();
  return join(real, relative(probe, full));
}

/** As resolveInside, for a path that must exist. */
export async function existingInside(root: string, userPath: string): Promise<string> {
  const path = await resolveInside(root, userPath);
  if (!(await exists(path))) throw notFound(`No file or directory ${userPath} in your workspace`);
  return path;
}

/** The path as the model should see it: relative to the workspace, `.` for the root. */
export function shown(root: string, path: string): string {
  return relative(root, path) || ".";
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
