import { existsSync, mkdirSync, readdirSync, rmdirSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join, sep } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { AppError } from "../../errors.ts";
import { type CpuLimits, openCpuGroup } from "./cgroup-cpu.ts";
import { type CgroupLayout, cgroupLayout, read } from "./cgroup-layout.ts";

/** What a run's group and all the service's runs together may use. */
export interface RunGroupLimits {
  /** All processes of one run together. */
  runMemoryBytes: number;
  /** All runs of this service together. */
  totalMemoryBytes: number;
  /** Processes and threads of one run at once (where the pids controller is available). */
  runProcesses: number;
  /** All runs of this service together, against the service (where the cpu controller is available). */
  cpu: CpuLimits;
}

/** One run's control group: the launcher joins it before it starts the program, so every child is in it. */
export interface RunGroup {
  /**
   * Moves `pid` and then every process it has started into the group (each hierarchy's): a process
   * started after its parent moved is born in the group, so once this resolves the whole tree is in it.
   * Written off the event loop: a move waits for one of the kernel's RCU grace periods.
   */
  admit(pid: number): Promise<void>;
  /** The processes in the group now. */
  pids(): number[];
  /** Ends whatever is left in the group and removes it; says how many processes the kernel ended for memory. */
  release(): Promise<number>;
}

const SERVICE_GROUP = /^agentos-sandbox-(\d+)-\d+$/;
/** Empty run groups kept for reuse, at most. */
const MAX_IDLE_GROUPS = 16;
let instances = 0;

/**
 * Control groups for confined runs: one group per service (all its runs together may use
 * `totalMemoryBytes`) under the service's own group, and one per run under it (`runMemoryBytes` for
 * all the run's processes together, `runProcesses` of them). Where the kernel's memory controller is
 * not available to this process (not root, cgroup v2 without delegation), `open` says why and limits
 * stay per process. Where the cpu controller is available too, all runs together weigh `cpu` against
 * the service, each run in a group of its own under it (runs share fairly among themselves).
 */
export class RunGroups {
  private runs = 0;
  private readonly leftovers = new Set<string>();
  /**
   * Groups of finished runs, empty, kept for the next runs: a process starts several milliseconds
   * slower in a group the kernel has just made than in one it has used before.
   */
  private readonly idle: string[][] = [];

  private readonly layout: Exclude<CgroupLayout, { version: null }>;
  /** The service's group in each hierarchy, the memory one first. */
  private readonly roots: string[];
  /** Why runs' CPU is not weighted against the service (null: it is). */
  cpuReason: string | null = null;
  private readonly limits: RunGroupLimits;

  private constructor(
    layout: Exclude<CgroupLayout, { version: null }>,
    roots: string[],
    limits: RunGroupLimits,
  ) {
    this.layout = layout;
    this.roots = roots;
    this.limits = limits;
  }

  /** The service's groups, made now (stale ones of services that died are removed first), or why not. */
  static async open(limits: RunGroupLimits): Promise<RunGroups | { reason: string }> {
    const layout = cgroupLayout(read("/proc/self/cgroup") ?? "", read("/proc/self/mountinfo") ?? "", (dir) =>
      read(join(dir, "cgroup.controllers")),
    );
    if (layout.version === null) return { reason: layout.reason };
    const parents =
      layout.version === 2 ? [layout.dir] : [layout.memory, layout.pids].filter((dir) => dir !== null);
    const name = `agentos-sandbox-${process.pid}-${instances++}`;
    try {
      for (const parent of parents) await removeStale(parent);
      if (layout.version === 2) enableControllers(layout.dir, ["memory", "pids"]);
      const roots = parents.map((parent) => join(parent, name));
      for (const root of roots) mkdirSync(root);
      const groups = new RunGroups(layout, roots, limits);
      removeAtExit(groups);
      groups.limitMemory(roots[0] as string, limits.totalMemoryBytes);
      if (layout.version === 2) enableControllers(roots[0] as string, ["memory", "pids"]);
      await groups.weighCpu(name);
      return groups;
    } catch (error) {
      return { reason: `control groups cannot be made here (${(error as Error).message})` };
    }
  }

  /** Runs' CPU weighted, v1 in a group of the cpu hierarchy (a root more), or `cpuReason` says why not. */
  private async weighCpu(name: string): Promise<void> {
    if (this.layout.version === 1 && this.layout.cpu) {
      // A failed sweep leaves the stale groups; the group is still made (its name is this process's).
      await removeStale(this.layout.cpu).catch(() => undefined);
    }
    const cpu = openCpuGroup(this.layout, name, this.roots[0] as string, this.limits.cpu);
    if ("reason" in cpu) this.cpuReason = cpu.reason;
    else if (cpu.dir) {
      this.roots.push(cpu.dir);
      this.cpuRoot = cpu.dir;
    }
  }

  /** The cpu hierarchy's group of the runs, where it is a hierarchy of its own (v1). */
  private cpuRoot: string | null = null;

  /**
   * Runs stop joining the cpu hierarchy (v1), for `reason`: a host that lets the service make cpu groups
   * but not move processes into them keeps the memory and process limits of run groups. False where
   * there is no separate cpu group to leave out.
   */
  dropCpu(reason: string): boolean {
    const root = this.cpuRoot;
    if (root === null) return false;
    this.cpuRoot = null;
    this.cpuReason = reason;
    this.roots.splice(this.roots.indexOf(root), 1);
    for (const dirs of this.idle) {
      const at = dirs.findIndex((dir) => dir.startsWith(root + sep));
      if (at >= 0) removeGroup(dirs.splice(at, 1)[0] as string);
    }
    removeGroup(root);
    return true;
  }

  get version(): 1 | 2 {
    return this.layout.version;
  }

  /**
   * A run's group, its limits set: one a finished run left empty, or a new one. Refused (503) when none
   * can be made, never run without it.
   */
  create(): RunGroup {
    for (const dir of this.leftovers) if (removeGroup(dir)) this.leftovers.delete(dir);
    const dirs = this.idle.pop() ?? this.made();
    // The kernel's count of processes it ended for memory only grows: this run's are those past it now.
    const killedBefore = this.oomKills(dirs[0] as string);
    return {
      admit: (pid) => admitTree(dirs, pid),
      pids: () => pidsIn(dirs[0] as string),
      release: async () => {
        const kills = this.oomKills(dirs[0] as string) - killedBefore;
        for (const dir of dirs) await emptyGroup(dir);
        if (this.idle.length < MAX_IDLE_GROUPS && dirs.every((dir) => pidsIn(dir).length === 0)) {
          this.idle.push(dirs);
        } else {
          for (const dir of dirs) if (!removeGroup(dir)) this.leftovers.add(dir);
        }
        return kills;
      },
    };
  }

  /** A new run group in each hierarchy, its limits set. */
  private made(): string[] {
    const name = `run-${this.runs++}`;
    const dirs = this.roots.map((root) => join(root, name));
    try {
      for (const dir of dirs) mkdirSync(dir);
      this.limitMemory(dirs[0] as string, this.limits.runMemoryBytes);
      const pids = dirs.find((dir) => existsSync(join(dir, "pids.max")));
      if (pids) writeFileSync(join(pids, "pids.max"), String(this.limits.runProcesses));
      return dirs;
    } catch (error) {
      for (const dir of dirs) removeGroup(dir);
      throw new AppError(
        "unavailable",
        `The run's control group could not be made: ${(error as Error).message}`,
      );
    }
  }

  /** Removes the service's groups (their runs are over by now; a group still busy is left to the next start's sweep). */
  async close(): Promise<void> {
    open.delete(this);
    for (const dir of [...this.leftovers, ...this.idle.splice(0).flat()]) {
      await emptyGroup(dir);
      removeGroup(dir);
    }
    for (const root of this.roots) removeGroup(root);
  }

  /** What close does, at once, for a process exiting without closing: the empty groups go. */
  removeEmpty(): void {
    for (const dir of [...this.leftovers, ...this.idle.splice(0).flat()]) removeGroup(dir);
    for (const root of this.roots) removeGroup(root);
  }

  private limitMemory(dir: string, bytes: number): void {
    if (this.layout.version === 2) {
      writeFileSync(join(dir, "memory.max"), String(bytes));
      // Swapped-out pages would escape the limit.
      if (existsSync(join(dir, "memory.swap.max"))) writeFileSync(join(dir, "memory.swap.max"), "0");
      return;
    }
    writeFileSync(join(dir, "memory.limit_in_bytes"), String(bytes));
    if (existsSync(join(dir, "memory.memsw.limit_in_bytes"))) {
      writeFileSync(join(dir, "memory.memsw.limit_in_bytes"), String(bytes));
    }
  }

  private oomKills(dir: string): number {
    const file = this.layout.version === 2 ? "memory.events" : "memory.oom_control";
    const match = /^oom_kill (\d+)$/m.exec(read(join(dir, file)) ?? "");
    return match ? Number(match[1]) : 0;
  }
}

/** Groups of this process not closed yet: an exit (a CLI, a test run) removes those that are empty. */
const open = new Set<RunGroups>();
let exitHook = false;

function removeAtExit(groups: RunGroups): void {
  open.add(groups);
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const groups of open) groups.removeEmpty();
  });
}

function enableControllers(dir: string, wanted: string[]): void {
  const available = (read(join(dir, "cgroup.controllers")) ?? "").split(/\s+/);
  const enabled = (read(join(dir, "cgroup.subtree_control")) ?? "").split(/\s+/);
  const missing = wanted.filter((name) => available.includes(name) && !enabled.includes(name));
  if (missing.length === 0) return;
  writeFileSync(join(dir, "cgroup.subtree_control"), missing.map((name) => `+${name}`).join(" "));
}

async function admitTree(dirs: readonly string[], root: number): Promise<void> {
  const pending = [root];
  for (let pid = pending.shift(); pid !== undefined; pid = pending.shift()) {
    try {
      // Each write waits for a grace period of its own: overlapped, the hierarchies cost about one.
      await Promise.all(dirs.map((dir) => writeFile(join(dir, "cgroup.procs"), String(pid))));
    } catch (error) {
      // Exited meanwhile: nothing of it is left to confine.
      if ((error as NodeJS.ErrnoException).code === "ESRCH") continue;
      throw error;
    }
    pending.push(...childrenOf(pid));
  }
}

/** The processes `pid` started (every thread's), from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  let threads: string[] = [];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return children;
  }
  for (const thread of threads) {
    const listed = read(`/proc/${pid}/task/${thread}/children`) ?? "";
    for (const child of listed.split(" ").filter(Boolean)) children.push(Number(child));
  }
  return children;
}

function pidsIn(dir: string): number[] {
  return (read(join(dir, "cgroup.procs")) ?? "").split("\n").filter(Boolean).map(Number);
}

/**
 * Kills what is in the group until it is empty (a few seconds at most: SIGKILL cannot be ignored). A
 * run's last processes are usually still exiting as it ends: looked at again soon, then less often.
 */
async function emptyGroup(dir: string): Promise<void> {
  let waitMs = 1;
  for (let waited = 0; waited < 5000; waited += waitMs, waitMs = Math.min(waitMs * 2, 100)) {
    const pids = pidsIn(dir);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    await sleep(waitMs);
  }
}

function removeGroup(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** Groups of services on this machine that died without removing them: their runs are ended and they go. */
async function removeStale(parent: string): Promise<void> {
  for (const entry of readdirSync(parent, { withFileTypes: true })) {
    const match = SERVICE_GROUP.exec(entry.name);
    if (!entry.isDirectory() || !match || alive(Number(match[1]))) continue;
    const group = join(parent, entry.name);
    for (const run of readdirSync(group, { withFileTypes: true })) {
      if (!run.isDirectory()) continue;
      await emptyGroup(join(group, run.name));
      removeGroup(join(group, run.name));
    }
    removeGroup(group);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
