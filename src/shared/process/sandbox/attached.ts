import type { Readable, Writable } from "node:stream";
import {
  type Finished,
  killGroup,
  killTree,
  type PipedChild,
  type Supervised,
  spawnWithPipes,
} from "../supervise.ts";
import type { WatchedFinish } from "./quota.ts";

/**
 * A confined program the caller talks to over its stdin and stdout (a language server). Its stderr
 * is kept (the first `maxStderrBytes`) for `done`; `done` says when it ended and, when the workspace
 * quota stopped it, why (`quotaStop`). `cancel` kills its process group.
 */
export interface Attached extends Supervised {
  stdin: Writable;
  stdout: Readable;
  done: Promise<WatchedFinish>;
}

/** What spawning needs of a prepared launch (the sandbox's Prepared). */
export type Launchable = Parameters<typeof spawnWithPipes>[2] & { command: string; args: string[] };

/**
 * A prepared program spawned with its stdin and stdout left to the caller: supervised as `supervise`
 * does (own process group, killed whole once the leader exits or on cancel), its stderr kept up to
 * `maxStderr` characters.
 */
export function attached(prepared: Launchable, maxStderr: number): Attached {
  const child: PipedChild = spawnWithPipes(prepared.command, prepared.args, prepared);
  const pid = child.pid ?? null;
  let reason: Finished["reason"] = "exited";
  let stderr = "";
  let gone = false;
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    if (stderr.length < maxStderr) stderr += chunk.slice(0, maxStderr - stderr.length);
  });
  child.stdin.on("error", () => undefined);
  const done = new Promise<Finished>((resolve) => {
    child.on("error", (error) =>
      resolve({
        reason: "spawn_failed",
        exitCode: null,
        signal: null,
        stdout: "",
        stderr,
        truncated: false,
        spawnError: error.message,
      }),
    );
    child.on("exit", () => {
      // The leader is gone: its group's stragglers go with it, so the pipes close and nothing lingers.
      if (pid !== null) killGroup(pid, "SIGKILL");
    });
    child.on("close", (exitCode, signal) => {
      gone = true;
      resolve({ reason, exitCode, signal, stdout: "", stderr, truncated: false });
    });
  });
  const cancel = () => {
    if (pid === null || gone) return;
    if (reason === "exited") reason = "cancelled";
    void killTree(pid);
  };
  return { pid, stdin: child.stdin, stdout: child.stdout, done, cancel };
}
