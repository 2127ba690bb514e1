import { createHash } from "node:crypto";
import { lchownSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Sandboxed programs of a service that runs as root get a uid of their own per workspace, above
 * systemd's container range (0x70000000…0x7fffffff): never root, never a user of the host, and a fork
 * bomb in one workspace does not count against another's process limit.
 */
const UID_BASE = 0x70000000;
const UID_SLOTS = 0x01000000;

export interface Owner {
  uid: number;
  gid: number;
}

/** Whether this service can hand its sandboxes another uid (it runs as root). */
export function runsAsRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

/** Owners this process has settled, by workspace path. */
const settled = new Map<string, Owner>();

/**
 * Who owns the workspace at `root` (a real path) and runs its sandboxed programs when the service is
 * root (null otherwise: the programs then run as the service's own uid, confined by namespaces, and
 * files need no change of owner). The uid starts from a hash of the workspace's directory name, and is
 * claimed: a file per uid in `.uids` beside the workspaces, created exclusively, names its workspace. A
 * name whose hashed uid another workspace holds takes the next free one, so two workspaces never share
 * a uid (they would see and kill each other's processes and share a process limit), and a claim
 * outlives its workspace, so no uid passes to another. Where no claim can be written (no such parent
 * directory), the hashed uid alone.
 */
export function workspaceOwner(root: string): Owner | null {
  if (!runsAsRoot()) return null;
  const known = settled.get(root);
  if (known) return known;
  const name = basename(root);
  const uid = claimedUid(dirname(root), name) ?? UID_BASE + hashedSlot(name);
  const owner = { uid, gid: uid };
  settled.set(root, owner);
  return owner;
}

/** What a new process knows of settled owners: nothing (tests). */
export function forgetOwners(): void {
  settled.clear();
}

/** Whether `uid` is one this service hands to workspaces. */
export function isWorkspaceUid(uid: number): boolean {
  return uid >= UID_BASE && uid < UID_BASE + UID_SLOTS;
}

function hashedSlot(name: string): number {
  return createHash("sha256").update(name).digest().readUInt32BE(0) % UID_SLOTS;
}

const MAX_PROBES = 1024;

function claimedUid(parent: string, name: string): number | undefined {
  const claims = join(parent, ".uids");
  try {
    mkdirSync(claims, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
  }
  const start = hashedSlot(name);
  for (let probe = 0; probe < MAX_PROBES; probe++) {
    const uid = UID_BASE + ((start + probe) % UID_SLOTS);
    const claim = join(claims, uid.toString(16));
    try {
      writeFileSync(claim, name, { flag: "wx", mode: 0o600 });
      return uid;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
      if (readFileSync(claim, "utf8") === name) return uid;
    }
  }
  return undefined;
}

/**
 * Gives every file of the tree to `owner`, links not followed: a workspace whose files belonged to
 * another workspace uid (one it shared before uids were claimed). Only while none of its programs run.
 */
export function chownTreeSync(path: string, owner: Owner): void {
  lchownSync(path, owner.uid, owner.gid);
  if (!lstatSync(path).isDirectory()) return;
  for (const entry of readdirSync(path)) chownTreeSync(join(path, entry), owner);
}

/** Live processes (not zombies) whose real uid is `uid` (Linux /proc). */
export function processesOf(uid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return entries
    .filter((pid) => {
      try {
        const status = readFileSync(`/proc/${pid}/status`, "utf8");
        return Number(/Uid:\s+(\d+)/.exec(status)?.[1]) === uid && !/State:\s+Z/.test(status);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Kills every live process of `uid` until none is left (a workspace's programs, when its files go). */
export async function killAllOf(uid: number): Promise<void> {
  for (let round = 0; round < 40; round++) {
    const pids = processesOf(uid);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
