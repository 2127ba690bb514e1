import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The project's pinned Node 24 (vitest itself runs on it, so process.execPath is the fallback). */
const PINNED_NODE = fileURLToPath(new URL("../../node_modules/node/bin/node", import.meta.url));
export const NODE = existsSync(PINNED_NODE) ? PINNED_NODE : process.execPath;
export const CLI = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

/** Generous waits: a child process on a busy CI machine can be slow to start. */
export const START_TIMEOUT_MS = 15_000;
export const EXIT_TIMEOUT_MS = 15_000;

export type Env = Record<string, string | undefined>;

/** A port nobody listens on right now: bind port 0, read what the OS picked, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function makeDataDir(): string {
  return mkdtempSync(join(tmpdir(), "agentos-cli-"));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** The parent's environment without any AGENTOS_* or provider settings, plus `env` (undefined = unset). */
function childEnv(env: Env): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("AGENTOS_") && !name.endsWith("_API_KEY")) base[name] = value;
  }
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete base[name];
    else base[name] = value;
  }
  return base;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliResult extends Exit {
  stdout: string;
  stderr: string;
}

/** Runs `agentos <args>` to completion (killed after `timeoutMs`, which then fails the caller). */
export function runCli(args: string[], env: Env, timeoutMs = 20_000, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [CLI, ...args], { env: childEnv(env), stdio: ["pipe", "pipe", "pipe"] });
    // Standard input is `input`, or empty (closed at once) as when nothing is piped in.
    child.stdin.end(input);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`agentos ${args.join(" ")} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`),
      );
    }, timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface ServeProcess {
  child: ChildProcess;
  port: number;
  /** The iii worker port (AGENTOS_ENGINE_PORT) of this process. */
  enginePort: number;
  url: string;
  dataDir: string;
  /** Everything the process wrote so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited (already, or later). */
  exited: Promise<Exit>;
  /** Waits until stdout matches `pattern` (or fails after `timeoutMs`). */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** fetch with `Authorization: Bearer <key>` when a key is given, JSON-encoding `json` as the body. */
  request(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  /** Sends `signal` and waits for the exit (SIGKILL and failure if it takes longer than the exit wait). */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

export interface ServeOptions {
  dataDir: string;
  /** Fixed ports (a restart that workers must find again); free ones by default. */
  port?: number;
  enginePort?: number;
  /** Extra environment (e.g. AGENTOS_API_KEY); AGENTOS_LOG_LEVEL defaults to "warn". */
  env?: Env;
}

/**
 * Spawns `agentos serve` on a free port and waits until it answers GET /healthz itself. A free port can be
 * taken by another test's process between freePort() and the child's listen: the child then exits on
 * EADDRINUSE, and is started again on other free ports (twice at most).
 */
export async function startServe(options: ServeOptions): Promise<ServeProcess> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await startServeOnce(options);
    } catch (error) {
      const chosen = options.port === undefined || options.enginePort === undefined;
      if (!chosen || attempt >= 2 || !/EADDRINUSE/.test(String(error))) throw error;
    }
  }
}

async function startServeOnce(options: ServeOptions): Promise<ServeProcess> {
  const port = options.port ?? (await freePort());
  const enginePort = options.enginePort ?? (await freePort());
  const env = childEnv({
    AGENTOS_LOG_LEVEL: "warn",
    ...options.env,
    AGENTOS_DATA_DIR: options.dataDir,
    AGENTOS_PORT: String(port),
    AGENTOS_HOST: "127.0.0.1",
    AGENTOS_ENGINE_PORT: String(enginePort),
  });
  const child = spawn(NODE, [CLI, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const watchers = new Set<() => void>();
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    for (const watcher of watchers) watcher();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const url = `http://127.0.0.1:${port}`;

  const server: ServeProcess = {
    child,
    port,
    enginePort,
    url,
    dataDir: options.dataDir,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForStdout(pattern, timeoutMs = START_TIMEOUT_MS) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(stdout)) return;
          finish();
          resolve();
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`stdout did not match ${pattern} within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          watchers.delete(check);
        };
        watchers.add(check);
        check();
      });
    },
    request(path, init = {}) {
      const { key, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key !== undefined) headers.set("authorization", `Bearer ${key}`);
      if (json !== undefined) headers.set("content-type", "application/json");
      return fetch(`${url}${path}`, {
        ...rest,
        headers,
        body: json === undefined ? rest.body : JSON.stringify(json),
      });
    },
    async stop(signal = "SIGTERM") {
      if (hasExited) return exited;
      child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`agentos serve did not exit within ${EXIT_TIMEOUT_MS} ms of ${signal}`));
        }, EXIT_TIMEOUT_MS);
      });
      try {
        return await Promise.race([exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };

  try {
    await waitUntilHealthy(
      server,
      () => hasExited,
      () => listensOn(child.pid, port),
    );
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return server;
}

async function waitUntilHealthy(
  server: ServeProcess,
  exited: () => boolean,
  ours: () => boolean,
): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited()) {
      throw new Error(`agentos serve exited during start:\n${server.stdout()}\n${server.stderr()}`);
    }
    try {
      const response = await fetch(`${server.url}/healthz`);
      // Another process that took the port answers too: only the child's own answer counts.
      if (response.ok && ours()) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `agentos serve did not answer /healthz within ${START_TIMEOUT_MS} ms:\n${server.stdout()}\n${server.stderr()}`,
  );
}

/** Stops every server still running (for afterEach), SIGKILL as the last resort. */
export async function stopAll(servers: ServeProcess[]): Promise<void> {
  await Promise.all(servers.splice(0).map((server) => server.stop("SIGTERM").catch(() => undefined)));
}

/**
 * Whether process `pid` holds the socket listening on `port` (Linux: /proc/net/tcp's listening sockets
 * against the process's file descriptors); elsewhere it is assumed.
 */
function listensOn(pid: number | undefined, port: number): boolean {
  let table: string;
  try {
    table = readFileSync("/proc/net/tcp", "utf8");
  } catch {
    return true;
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set(
    table
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[1]?.endsWith(`:${hexPort}`) && fields[3] === "0A")
      .map((fields) => `socket:[${fields[9]}]`),
  );
  if (pid === undefined || inodes.size === 0) return false;
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}
