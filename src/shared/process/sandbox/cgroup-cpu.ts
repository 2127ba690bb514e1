import { mkdirSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CgroupLayout, read } from "./cgroup-layout.ts";

/** How much CPU all runs of the service together get, against the service itself. */
export interface CpuLimits {
  /** Percent of the service's weight (a nice-0 process, or its scheduler autogroup: 1024 in v1, 100 in v2). */
  weightPercent: number;
  /** The most all runs together may use, in cores (null: only the weight). */
  cores: number | null;
}

/** CFS bandwidth period, the kernel's default: the ceiling is this many µs times the cores per period. */
const PERIOD_US = 100_000;

/**
 * The service's cpu group for its runs, made and weighted: v1, a directory of the cpu hierarchy (a
 * group per run is then made under it with the others'); v2, the service's group `root` (already made,
 * for memory) with the cpu controller enabled for it and its runs. Or why runs' CPU is not weighted.
 *
 * Why a group and not a nice value: each run is a session of its own (bubblewrap's --new-session), so
 * the kernel gives it its own scheduler autogroup, as heavy as the service's, and a program may setsid
 * again. A process in a cpu group other than the hierarchy's root has no autogroup: all runs together
 * weigh what this group weighs, however many sessions they make. The group is a child of the
 * service's own cpu group: under a systemd unit's, it competes with the service alone; where the
 * service is in the hierarchy's root, with every session of the host too (runs yield to all of them).
 */
export function openCpuGroup(
  layout: Exclude<CgroupLayout, { version: null }>,
  name: string,
  root: string,
  limits: CpuLimits,
): { dir: string | null } | { reason: string } {
  if (layout.version === 1) {
    if (!layout.cpu) return { reason: "no cgroup v1 cpu hierarchy is mounted" };
    const dir = join(layout.cpu, name);
    try {
      mkdirSync(dir);
      weigh(dir, 1, limits);
      return { dir };
    } catch (error) {
      try {
        rmdirSync(dir);
      } catch {
        // Not made.
      }
      return { reason: `the runs' cpu group cannot be made here (${(error as Error).message})` };
    }
  }
  const available = (read(join(layout.dir, "cgroup.controllers")) ?? "").split(/\s+/);
  if (!available.includes("cpu")) {
    return { reason: `the cpu controller is not available to this process's cgroup (${layout.dir})` };
  }
  try {
    for (const dir of [layout.dir, root]) {
      if (!(read(join(dir, "cgroup.subtree_control")) ?? "").split(/\s+/).includes("cpu")) {
        writeFileSync(join(dir, "cgroup.subtree_control"), "+cpu");
      }
    }
    weigh(root, 2, limits);
    // v2's group is the memory one, already among the run groups' parents.
    return { dir: null };
  } catch (error) {
    return { reason: `the cpu controller cannot be enabled here (${(error as Error).message})` };
  }
}

function weigh(dir: string, version: 1 | 2, limits: CpuLimits): void {
  const quota = limits.cores === null ? null : Math.max(1000, Math.round(limits.cores * PERIOD_US));
  if (version === 1) {
    writeFileSync(
      join(dir, "cpu.shares"),
      String(Math.max(2, Math.round((1024 * limits.weightPercent) / 100))),
    );
    if (quota !== null) {
      writeFileSync(join(dir, "cpu.cfs_period_us"), String(PERIOD_US));
      writeFileSync(join(dir, "cpu.cfs_quota_us"), String(quota));
    }
    return;
  }
  writeFileSync(join(dir, "cpu.weight"), String(Math.max(1, limits.weightPercent)));
  if (quota !== null) writeFileSync(join(dir, "cpu.max"), `${quota} ${PERIOD_US}`);
}
