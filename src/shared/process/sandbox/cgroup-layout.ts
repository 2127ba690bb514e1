import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Where this process may make control groups for its runs: with cgroup v2, one directory (its own
 * group); with v1, the memory hierarchy's directory and, where mounted, the pids and cpu hierarchies'.
 */
export type CgroupLayout =
  | { version: 2; dir: string }
  | { version: 1; memory: string; pids: string | null; cpu: string | null }
  | { version: null; reason: string };

interface Mount {
  /** The hierarchy's path this mount shows at its mount point. */
  root: string;
  point: string;
  fstype: string;
  options: string[];
}

/** A control file's text (or /proc's), null where it cannot be read. */
export function read(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** Mounts of cgroup file systems, from /proc/self/mountinfo. */
function cgroupMounts(mountinfo: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of mountinfo.split("\n")) {
    const [before, after] = line.split(" - ");
    if (!before || !after) continue;
    const fields = before.split(" ");
    const [fstype, , superOptions = ""] = after.split(" ");
    if (fstype !== "cgroup" && fstype !== "cgroup2") continue;
    mounts.push({
      root: unescapeMountPath(fields[3] ?? ""),
      point: unescapeMountPath(fields[4] ?? ""),
      fstype,
      options: superOptions.split(","),
    });
  }
  return mounts;
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** This process's group in each hierarchy, from /proc/self/cgroup: controller list → path. */
function ownGroups(procCgroup: string): Array<{ controllers: string[]; path: string }> {
  const groups: Array<{ controllers: string[]; path: string }> = [];
  for (const line of procCgroup.split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (match)
      groups.push({ controllers: (match[1] ?? "").split(",").filter(Boolean), path: match[2] ?? "" });
  }
  return groups;
}

/** The directory of `path` (a group in the hierarchy) under `mount`, or null if the mount does not show it. */
function directoryOf(mount: Mount, path: string): string | null {
  const shown = mount.root === "/" || path === mount.root || path.startsWith(`${mount.root}/`);
  if (!shown) return null;
  const inside = mount.root === "/" ? path : path.slice(mount.root.length);
  return join(mount.point, inside).replace(/(.)\/+$/, "$1");
}

/**
 * This process's own groups, found from /proc/self/cgroup and /proc/self/mountinfo: v1 where a memory
 * hierarchy is mounted (hybrid machines keep their controllers there), otherwise v2 where its memory
 * controller is available to this process's group.
 */
export function cgroupLayout(
  procCgroup: string,
  mountinfo: string,
  v2Controllers: (dir: string) => string | null,
): CgroupLayout {
  const mounts = cgroupMounts(mountinfo);
  const groups = ownGroups(procCgroup);
  const v1Dir = (controller: string): string | null => {
    const mount = mounts.find((entry) => entry.fstype === "cgroup" && entry.options.includes(controller));
    const group = groups.find((entry) => entry.controllers.includes(controller));
    return mount && group ? directoryOf(mount, group.path) : null;
  };
  const memory = v1Dir("memory");
  if (memory) return { version: 1, memory, pids: v1Dir("pids"), cpu: v1Dir("cpu") };
  const unified = mounts.find((entry) => entry.fstype === "cgroup2");
  const group = groups.find((entry) => entry.controllers.length === 0);
  if (!unified || !group)
    return { version: null, reason: "no cgroup file system with a memory controller is mounted" };
  const dir = directoryOf(unified, group.path);
  if (!dir)
    return { version: null, reason: `this process's cgroup ${group.path} is not under ${unified.point}` };
  const available = v2Controllers(dir)?.split(/\s+/) ?? [];
  if (!available.includes("memory")) {
    return {
      version: null,
      reason: `the memory controller is not available to this process's cgroup (${dir})`,
    };
  }
  return { version: 2, dir };
}
