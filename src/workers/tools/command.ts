import { basename, dirname } from "node:path";
import { badRequest } from "../../shared/errors.ts";
import type { Egress, Sandbox } from "../../shared/process/sandbox/index.ts";
import { findExecutable, SAFE_PATH } from "../../shared/process/supervise.ts";
import { resolveInside } from "./sandbox.ts";

export { SAFE_PATH };
export const DEFAULT_TIMEOUT_MS = 60_000;
export const MAX_TIMEOUT_MS = 600_000;
export const MAX_OUTPUT_BYTES = 100_000;

/**
 * Commands shell_exec may start (AGENTOS_SHELL_ALLOWLIST, comma-separated, replaces it). Nothing that
 * runs arbitrary other commands by design (sh, bash, env, xargs, awk, sudo) is on it.
 */
export const DEFAULT_ALLOWLIST = [
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "sort",
  "uniq",
  "cut",
  "tr",
  "grep",
  "find",
  "diff",
  "cmp",
  "echo",
  "printf",
  "date",
  "pwd",
  "mkdir",
  "touch",
  "cp",
  "mv",
  "rm",
  "rmdir",
  "sed",
  "jq",
  "basename",
  "dirname",
  "stat",
  "file",
  "du",
  "tee",
  "seq",
  "sleep",
  "true",
  "false",
  "base64",
  "sha256sum",
  "md5sum",
  "gzip",
  "gunzip",
  "zcat",
  "zip",
  "unzip",
  "git",
  "node",
  "npm",
  "npx",
  "python3",
  "python",
  "make",
  "cargo",
  "go",
  "rustc",
  "tsc",
  "pytest",
  "deno",
  "bun",
];

/** Arguments that make an allowlisted command run another one (or rewrite its configuration). */
const FORBIDDEN_ARGS: Record<string, RegExp> = {
  find: /^-(exec|execdir|ok|okdir)$/,
  git: /^(-c|--config-env|--exec-path|--upload-pack|--receive-pack)(=|$)/,
};

export function allowlistFrom(env: NodeJS.ProcessEnv): string[] {
  const configured = env.AGENTOS_SHELL_ALLOWLIST?.split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  return configured && configured.length > 0 ? configured : DEFAULT_ALLOWLIST;
}

export interface CommandRequest {
  command: string;
  args: string[];
  timeoutMs?: number;
  maxOutputBytes?: number;
  env?: Record<string, string>;
  stdin?: string;
  signal?: AbortSignal;
  /** Network reach through the service's guarding proxy (the agent's grant); none by default. */
  egress?: Egress | null;
  /** A directory of the workspace to run in (default: its root). */
  cwd?: string;
}

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timedOut: boolean;
  durationMs: number;
}

/**
 * Runs `command` (a bare name on the allowlist) with `args` in the workspace `root`, in the sandbox: no
 * shell, a minimal environment (HOME is the workspace), killed whole at the timeout, output capped.
 * Arguments naming paths outside the workspace are refused up front, for a clear answer; the sandbox is
 * what actually keeps the program in.
 */
export async function runCommand(
  sandbox: Sandbox,
  root: string,
  allowlist: string[],
  request: CommandRequest,
) {
  const { command, args } = request;
  if (!/^[A-Za-z0-9._+-]+$/.test(command)) {
    throw badRequest(`command must be a bare program name (no path, no shell syntax): ${command}`);
  }
  if (!allowlist.includes(command)) {
    throw badRequest(
      `Command ${command} is not on the allowlist (${allowlist.join(", ")}); AGENTOS_SHELL_ALLOWLIST changes it`,
    );
  }
  const executable = findExecutable(command, sandbox.searchPath);
  if (!executable) throw badRequest(`Command ${command} is not installed on this host`);
  for (const arg of args) await checkArgument(root, command, arg);
  return runProgram(sandbox, root, executable, {
    ...request,
    args: command === "sed" ? ["--sandbox", ...args] : args,
  });
}

/**
 * Git never looks for a repository above the workspace, reads no system or global configuration, runs
 * no hooks and asks for no password.
 */
export function gitEnv(root: string): Record<string, string> {
  return {
    GIT_CEILING_DIRECTORIES: dirname(root),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_COUNT: "2",
    GIT_CONFIG_KEY_0: "core.hooksPath",
    GIT_CONFIG_VALUE_0: "/dev/null",
    GIT_CONFIG_KEY_1: "core.fsmonitor",
    GIT_CONFIG_VALUE_1: "false",
  };
}

/** Runs a program the service chose (a formatter, git) in the workspace's sandbox, under the same limits. */
export async function runProgram(
  sandbox: Sandbox,
  root: string,
  executable: string,
  request: Omit<CommandRequest, "command">,
) {
  const command = basename(executable);
  const started = performance.now();
  const supervised = await sandbox.start(
    {
      workspace: root,
      executable,
      args: request.args,
      env: { ...(command === "git" ? gitEnv(sandbox.pathOf(root, root)) : {}), ...request.env },
      cwd: request.cwd,
      egress: request.egress,
    },
    {
      stdin: request.stdin,
      timeoutMs: Math.min(request.timeoutMs ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS),
      maxStdoutBytes: request.maxOutputBytes ?? MAX_OUTPUT_BYTES,
      maxStderrBytes: request.maxOutputBytes ?? MAX_OUTPUT_BYTES,
      killGraceMs: 0,
    },
  );
  const onAbort = () => supervised.cancel();
  request.signal?.addEventListener("abort", onAbort, { once: true });
  const finished = await supervised.done.finally(() => request.signal?.removeEventListener("abort", onAbort));
  if (finished.reason === "spawn_failed") {
    throw badRequest(`Command ${command} could not start: ${finished.spawnError}`);
  }
  return {
    exitCode: finished.exitCode,
    signal: finished.signal,
    stdout: finished.stdout,
    stderr: finished.stderr,
    truncated: finished.truncated,
    timedOut: finished.reason === "timed_out",
    durationMs: Math.round(performance.now() - started),
  } satisfies CommandResult;
}

async function checkArgument(root: string, command: string, arg: string): Promise<void> {
  if (arg.includes("\0")) throw badRequest("arguments must not contain NUL");
  if (FORBIDDEN_ARGS[command]?.test(arg)) throw badRequest(`Argument ${arg} is not allowed for ${command}`);
  // `--file=/etc/passwd` names a path as much as `/etc/passwd` does.
  const value = arg.startsWith("-") && arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : arg;
  if (value.startsWith("-") || value === "") return;
  if (value.startsWith("~")) throw badRequest(`Argument ${arg} is refused: "~" is outside your workspace`);
  // Every argument is checked as a path: a relative name that is a link out of the workspace is refused too.
  // Programs see the workspace at /workspace.
  const inside = value === "/workspace" || value.startsWith("/workspace/");
  await resolveInside(root, inside ? value.slice("/workspace/".length) || "." : value);
}
