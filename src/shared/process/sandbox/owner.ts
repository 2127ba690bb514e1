import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { basename } from "node:path";

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

/**
 * Who owns the workspace at `root` (a real path) and runs its sandboxed programs: a uid derived from
 * the workspace's directory name when the service is root, null otherwise (the programs then run as
 * the service's own uid, confined by namespaces, and files need no change of owner).
 */
export function workspaceOwner(root: string): Owner | null {
  if (!runsAsRoot()) return null;
  const digest = createHash("sha256").update(basename(root)).digest();
  const uid = UID_BASE + (digest.readUInt32BE(0) % UID_SLOTS);
  return { uid, gid: uid };
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
