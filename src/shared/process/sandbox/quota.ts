import { listContained } from "../../fs/contained-dir.ts";
import type { Finished, Supervised } from "../supervise.ts";

/**
 * Bytes a directory tree takes on disk (allocated blocks, links not followed), stopping early once
 * past `stopAbove`: a size check, not a quota the file system enforces, so each workspace's size is
 * measured before a run and while it lasts.
 */
export async function diskUsage(root: string, stopAbove = Number.POSITIVE_INFINITY): Promise<number> {
  let total = 0;
  const pending = [root];
  while (pending.length > 0 && total <= stopAbove) {
    const dir = pending.pop() as string;
    for (const entry of (await listContained(root, dir)) ?? []) {
      if (entry.isDirectory) pending.push(entry.path);
      total += entry.allocated;
    }
  }
  return total;
}

/** How long a measured size is trusted before a run measures again (runs in between measure after). */
const FRESH_MS = 30_000;

/**
 * Each workspace's last measured size, so a run in a large workspace does not walk it every time. While
 * a watched program runs in a workspace its size is not trusted (the program may be writing): a run
 * started meanwhile measures, so it gets the room the quota leaves now, not what it left before.
 */
export class UsageCache {
  private readonly sizes = new Map<string, { bytes: number; at: number }>();
  /** Watched programs running in each workspace. */
  private readonly running = new Map<string, number>();

  async current(root: string, quota: number): Promise<number> {
    const known = this.sizes.get(root);
    if (known && !this.running.has(root) && Date.now() - known.at < FRESH_MS) return known.bytes;
    return this.measure(root, quota);
  }

  /** A watched program started in `root`; the function returned says it ended (its writes then unknown). */
  started(root: string): () => void {
    this.running.set(root, (this.running.get(root) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.running.get(root) ?? 1) - 1;
      if (left > 0) this.running.set(root, left);
      else this.running.delete(root);
      this.sizes.delete(root);
    };
  }

  async measure(root: string, quota: number): Promise<number> {
    const bytes = await diskUsage(root, quota);
    this.sizes.set(root, { bytes, at: Date.now() });
    return bytes;
  }

  /** Counts bytes the service itself just wrote (until the next measure). */
  add(root: string, bytes: number): void {
    const known = this.sizes.get(root);
    if (known) known.bytes += bytes;
  }

  forget(root: string): void {
    this.sizes.delete(root);
  }
}

const MiB = 1024 * 1024;
/**
 * How often a running program's workspace is measured against the quota: every half second, or less
 * often where measuring takes long (a large workspace), so the check costs at most a tenth of a core.
 */
const QUOTA_CHECK_MS = 500;

export function overQuota(used: number, quota: number): string {
  return `the workspace is over its quota (${Math.ceil(used / MiB)} MiB of ${Math.floor(quota / MiB)} MiB): delete files to make room (AGENTOS_WORKSPACE_QUOTA_MB sets the quota)`;
}

/** How a watched run finished: `quotaStop` says why it was stopped when the quota stopped it. */
export type WatchedFinish = Finished & { quotaStop?: string };

/**
 * `supervised`, stopped when its workspace grows past `quota` while it runs (its answer then says so,
 * in its stderr and in `quotaStop`). Whatever else `supervised` carries (a program's pipes) is kept.
 */
export function watchQuota<S extends Supervised>(
  usage: UsageCache,
  workspace: string,
  quota: number,
  supervised: S,
): S & { done: Promise<WatchedFinish> } {
  const ended = usage.started(workspace);
  let over: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running = true;
  const check = async () => {
    const started = performance.now();
    const bytes = await usage.measure(workspace, quota);
    if (bytes > quota && over === undefined) {
      over = bytes;
      supervised.cancel();
    }
    if (over !== undefined || !running) return;
    timer = setTimeout(check, Math.max(QUOTA_CHECK_MS, 10 * (performance.now() - started)));
    timer.unref();
  };
  timer = setTimeout(check, QUOTA_CHECK_MS);
  timer.unref();
  const done = supervised.done.then((finished): WatchedFinish => {
    running = false;
    clearTimeout(timer);
    ended();
    if (over === undefined) {
      // What the run wrote counts for the next one; the answer does not wait for the walk.
      void usage.measure(workspace, quota).catch(() => undefined);
      return finished;
    }
    const quotaStop = overQuota(over, quota);
    return { ...finished, stderr: `${finished.stderr}\n[agentos] stopped: ${quotaStop}`, quotaStop };
  });
  return { ...supervised, done };
}
