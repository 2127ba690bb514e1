import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, openSync, readdirSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { type Readable, Writable } from "node:stream";

/** Where programs are looked up: the system's directories, never a caller's PATH. */
export const SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
export const MAX_STDOUT_BYTES = 1024 * 1024;
const MAX_STDERR_BYTES = 64 * 1024;
/** Between TERM and KILL: time for a process to save its work and exit. */
export const KILL_GRACE_MS = 2000;
/** What a supervised process inherits from the service by default: never its secrets. */
export const INHERITED_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "LANG",
  "LC_ALL",
  "TERM",
  "TMPDIR",
  "TZ",
  "SHELL",
];

export interface Launch {
  command: string;
  args: string[];
  /** Set on top of the inherited variables. */
  env: Record<string, string>;
  /** Names taken from the service's own environment (default INHERITED_ENV; [] for none). */
  inherit?: readonly string[];
  cwd?: string;
  /** Written to the process's stdin, which is then closed (default: nothing). */
  stdin?: string;
  timeoutMs: number;
  /** `[name, value]` set in the environment, so leftovers are found after a crash (children inherit it). */
  marker?: readonly [string, string];
  maxStdoutBytes?: number;
  maxStderrBytes?: number;
  /** Between TERM and KILL (default KILL_GRACE_MS; 0 kills at once). */
  killGraceMs?: number;
  /**
   * Descriptors 3, 4, … of the child: an open descriptor of ours passed on as it is, or bytes it reads
   * from a pipe (the sandbox's file table and seccomp filter).
   */
  extraStdio?: ReadonlyArray<ExtraStdio>;
}

/**
 * A pipe the child reads one byte from once `opened` resolves (closed without one if it rejects, which
 * the child reads as end-of-file): it waits on it until its caller lets it go on.
 */
export interface Gate {
  opened: Promise<void>;
}

/** Descriptor 3… of a child: one of ours passed on, bytes it reads, or a gate it waits on. */
export type ExtraStdio = number | Buffer | Gate;

export interface Finished {
  reason: "exited" | "timed_out" | "cancelled" | "spawn_failed";
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  spawnError?: string;
}

export interface Supervised {
  /** The child's pid, which is its process group too (null when it could not start). */
  pid: number | null;
  done: Promise<Finished>;
  cancel(): void;
}

/**
 * Starts a process without a shell in its own process group, feeds it `stdin`, keeps at most
 * `maxStdoutBytes` of its output, and ends the whole group (TERM, then KILL after a grace period) on
 * timeout or cancel. When the process exits, whatever it left running in its group is killed too:
 * nothing outlives a run.
 */
export function supervise(launch: Launch): Supervised {
  const env: Record<string, string> = {};
  for (const name of launch.inherit ?? INHERITED_ENV) {
    if (process.env[name] !== undefined) env[name] = process.env[name] as string;
  }
  Object.assign(env, launch.env);
  if (launch.marker) env[launch.marker[0]] = launch.marker[1];
  const maxStdout = launch.maxStdoutBytes ?? MAX_STDOUT_BYTES;
  const maxStderr = launch.maxStderrBytes ?? MAX_STDERR_BYTES;
  const graceMs = launch.killGraceMs ?? KILL_GRACE_MS;
  const child = spawnWithPipes(launch.command, launch.args, { ...launch, env });
  let reason: Finished["reason"] = "exited";
  let stdout = "";
  let stderr = "";
  let truncated = false;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    if (stdout.length + chunk.length > maxStdout) {
      truncated = true;
      stdout += chunk.slice(0, Math.max(0, maxStdout - stdout.length));
    } else stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    if (stderr.length < maxStderr) stderr += chunk.slice(0, maxStderr - stderr.length);
    else truncated = true;
  });
  child.stdin.on("error", () => undefined);
  child.stdin.end(launch.stdin ?? "");
  const pid = child.pid ?? null;
  if (pid !== null) watchOnExit(pid);
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (why: Finished["reason"]) => {
    if (reason !== "exited" || pid === null) return;
    reason = why;
    if (graceMs === 0) return void end(pid);
    killGroup(pid, "SIGTERM");
    killTimer = setTimeout(() => void end(pid), graceMs);
  };
  // A process that left the group, the tree and its marker behind may still hold our pipes: a grace
  // period after the kill (for what the killed ones wrote) they are closed, so a stopped run ends rather
  // than when that process chooses to exit.
  let closeTimer: NodeJS.Timeout | undefined;
  const end = (group: number) =>
    killTree(group).then(() => {
      closeTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, KILL_GRACE_MS);
    });
  const timer = setTimeout(() => stop("timed_out"), launch.timeoutMs);
  const done = new Promise<Finished>((resolve) => {
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({
        reason: "spawn_failed",
        exitCode: null,
        signal: null,
        stdout,
        stderr,
        truncated,
        spawnError: error.message,
      });
    });
    child.on("exit", () => {
      // The leader is gone: its group's stragglers go with it, so the pipes close and nothing lingers;
      // so do those that left the group (a session of their own) but still carry the marker.
      if (pid !== null) killGroup(pid, "SIGKILL");
      if (launch.marker) killLeftovers(launch.marker[0], new Set([launch.marker[1]]));
    });
    child.on("close", (exitCode, signal) => {
      if (pid !== null) live.delete(pid);
      clearTimeout(timer);
      clearTimeout(killTimer);
      clearTimeout(closeTimer);
      resolve({ reason, exitCode, signal, stdout, stderr, truncated });
    });
  });
  return { pid, done, cancel: () => stop("cancelled") };
}

export type PipedChild = ChildProcess & { stdin: Writable; stdout: Readable; stderr: Readable };

/**
 * `spawn` in a process group of its own, with stdin/stdout/stderr as pipes and descriptors 3… as
 * `extraStdio` says (fed and closed here). A descriptor the service inherited without close-on-exec is
 * /dev/null in the child, never passed on.
 */
export function spawnWithPipes(
  command: string,
  args: readonly string[],
  options: Pick<Launch, "cwd" | "extraStdio"> & { env: Record<string, string> },
): PipedChild {
  const extra = options.extraStdio ?? [];
  const stdio: Array<"pipe" | "ignore" | number> = extra.map((entry) =>
    typeof entry === "number" ? entry : "pipe",
  );
  for (const fd of leakedDescriptors()) {
    const index = fd - 3;
    if (index < extra.length) continue;
    while (stdio.length < index) stdio.push("ignore");
    stdio[index] = devNull();
  }
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ["pipe", "pipe", "pipe", ...stdio],
  });
  feedExtra(child.stdio, extra);
  const { stdin, stdout, stderr } = child;
  if (!stdin || !stdout || !stderr) throw new Error("spawn gave no standard pipes");
  return Object.assign(child, { stdin, stdout, stderr });
}

const O_CLOEXEC = 0o2000000;

let leaked: number[] | undefined;
/**
 * Descriptors 3… of this process without close-on-exec: ones its launcher left open (a supervisor's
 * pipe, socket activation, a redirected file), which every child would inherit, a sandboxed one too.
 * Node opens its own with close-on-exec, so these are there from the start: found once (a busy
 * service has thousands of sockets to look through). Linux /proc; none elsewhere.
 */
function leakedDescriptors(): number[] {
  if (leaked) return leaked;
  let names: string[] = [];
  try {
    names = readdirSync("/proc/self/fd");
  } catch {
    // No /proc: nothing to look through.
  }
  leaked = names
    .map(Number)
    .filter((fd) => fd >= 3 && !closesOnExec(fd))
    .sort((a, b) => a - b);
  return leaked;
}

function closesOnExec(fd: number): boolean {
  try {
    const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
    return flags === undefined || (Number.parseInt(flags, 8) & O_CLOEXEC) !== 0;
  } catch {
    // Closed meanwhile.
    return true;
  }
}

let devNullFd: number | undefined;
/** /dev/null, opened once: what a child gets in place of a leaked descriptor. */
function devNull(): number {
  devNullFd ??= openSync("/dev/null", "r");
  return devNullFd;
}

/** Writes each byte entry of `extra` to its pipe and closes it (the child reads to the end). */
export function feedExtra(stdio: ReadonlyArray<unknown>, extra: ReadonlyArray<ExtraStdio>): void {
  extra.forEach((entry, index) => {
    const pipe = stdio[index + 3];
    if (typeof entry === "number" || !(pipe instanceof Writable)) return;
    pipe.on("error", () => undefined);
    if (Buffer.isBuffer(entry)) pipe.end(entry);
    else
      entry.opened.then(
        () => pipe.end("1"),
        () => pipe.destroy(),
      );
  });
}

/** Groups of runs still going: a service that exits (not killed) takes them with it. */
const live = new Set<number>();
let exitHook = false;

function watchOnExit(pid: number): void {
  live.add(pid);
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const group of live) killGroup(group, "SIGKILL");
  });
}

/**
 * Kills the process group of `pid` and every process `pid` started, wherever they went: a child in a
 * session of its own is out of the group's reach (a sandbox's init is, and dies with bubblewrap only
 * once it has asked the kernel to). The leader is stopped first, so it starts no child while its
 * children are looked up, and cannot reap one (whose pid then stays its own) before it is killed.
 */
export async function killTree(pid: number): Promise<void> {
  killGroup(pid, "SIGSTOP");
  for (let tries = 0; tries < 100 && stateOf(pid) === "running"; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  for (const child of descendantsOf(pid)) {
    try {
      process.kill(child, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  killGroup(pid, "SIGKILL");
}

/** The process ids /proc lists (Linux); none where there is no /proc. */
function processIds(): string[] {
  try {
    return readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
}

/**
 * The fields of /proc/<pid>/stat after the command name (state, parent, …): the name is in parentheses
 * and may hold spaces and parentheses itself. Null when the process is gone.
 */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** Whether `pid` has stopped (or is gone), from /proc/<pid>/stat; "running" for any other state. */
function stateOf(pid: number): "stopped" | "gone" | "running" {
  const state = statFields(pid)?.[0];
  if (state === undefined || state === "Z") return "gone";
  return state === "T" || state === "t" ? "stopped" : "running";
}

/** Every process below `pid` (Linux /proc, by each one's parent). */
function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of processIds()) {
    const parent = statFields(entry)?.[1];
    // Gone meanwhile: no parent to file it under.
    if (parent !== undefined)
      children.set(Number(parent), [...(children.get(Number(parent)) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    for (const child of children.get(pending.pop() as number) ?? []) {
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Kills every process that carries the marker `name` with one of these values (Linux /proc): what a
 * run left behind when the service died, wherever its processes went (reparented, or in groups of
 * their own).
 */
export function killLeftovers(name: string, runIds: Set<string>): number[] {
  if (runIds.size === 0) return [];
  const killed: number[] = [];
  for (const entry of processIds()) {
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, "utf8");
    } catch {
      continue;
    }
    const marker = environ.split("\0").find((pair) => pair.startsWith(`${name}=`));
    if (!marker || !runIds.has(marker.slice(name.length + 1))) continue;
    try {
      process.kill(pid, "SIGKILL");
      killed.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return killed;
}

/** The executable `command` names, found as the service would start it (a path, or on PATH); null if none. */
export function findExecutable(command: string, path = process.env.PATH ?? ""): string | null {
  const candidates = command.includes("/")
    ? [command]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, command));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}
