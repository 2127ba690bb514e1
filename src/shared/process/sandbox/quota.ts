import { statfs } from "node:fs/promises";
import { listContained } from "../../fs/contained-dir.ts";
import type { Finished, Supervised } from "../supervise.ts";

/**
 * What an entry costs at least: one block. An empty file, a link or a FIFO has no block but takes an
 * inode of the disk, and a quota of bytes alone would let one workspace use up every inode (the
 * service's database then cannot create a file).
 */
export const ENTRY_BYTES = 4096;

/**
 * The longest path of a directory the walk opens. A program can nest directories deeper than any path
 * the service can open (PATH_MAX, 4096 bytes, from the host's root), and what it keeps there no walk
 * would find: so such a directory counts as more than any quota (TOO_DEEP_BYTES) until it is removed.
 */
export const MAX_WALKED_PATH = 3072;
export const TOO_DEEP_BYTES = 2 ** 50;

/**
 * Bytes a directory tree takes on disk (allocated blocks, at least ENTRY_BYTES an entry, links not
 * followed), stopping early once past `stopAbove`: a size check, not a quota the file system enforces,
 * so each workspace's size is measured before a run and while it lasts.
 */
export async function diskUsage(root: string, stopAbove = Number.POSITIVE_INFINITY): Promise<number> {
  let total = 0;
  const pending = [root];
  while (pending.length > 0 && total <= stopAbove) {
    const dir = pending.pop() as string;
    for (const entry of (await listContained(root, dir)) ?? []) {
      total += Math.max(entry.allocated, ENTRY_BYTES);
      if (!entry.isDirectory) continue;
      if (Buffer.byteLength(entry.path) > MAX_WALKED_PATH) total += TOO_DEEP_BYTES;
      else pending.push(entry.path);
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

export function overQuota(used: number, quota: number, held = 0): string {
  if (used >= TOO_DEEP_BYTES)
    return `the workspace holds directories nested too deep to measure (a path of over ${MAX_WALKED_PATH} bytes), which count as past its quota: delete them to make room`;
  const including =
    held > 0 ? `, ${Math.ceil(held / MiB)} MiB of them deleted files its programs kept open` : "";
  return `the workspace is over its quota (${Math.ceil(used / MiB)} MiB of ${Math.floor(quota / MiB)} MiB${including}): delete files to make room (AGENTOS_WORKSPACE_QUOTA_MB sets the quota)`;
}

/** How a watched run finished: `quotaStop` says why it was stopped when the quota (or the disk) stopped it. */
export type WatchedFinish = Finished & { quotaStop?: string };

/** What a watched run must stay within: its workspace's quota, and the free space its disk keeps. */
export interface WatchLimits {
  quota: number;
  diskReserve: number;
  /**
   * Bytes of the workspace's disk the run holds in files it deleted but keeps open (no walk finds
   * them): counted against the quota too, so one run cannot fill the disk that way and stop everyone's
   * programs at the reserve. Absent where the run's processes are not known (no control group).
   */
  held?: () => Promise<number>;
  /**
   * The workspace was over its quota when the run started (it may delete, not write): the run is then
   * stopped only when the workspace grows past what it held at the watch's first look, so an `rm -r` of a
   * large tree is not stopped halfway for the files it has yet to delete.
   */
  startedOver?: boolean;
}

/**
 * `supervised`, stopped when its workspace grows past the quota while it runs, or when the disk holding
 * it runs short of its reserve (its answer then says so, in its stderr and in `quotaStop`). Whatever
 * else `supervised` carries (a program's pipes) is kept.
 */
export function watchQuota<S extends Supervised>(
  usage: UsageCache,
  workspace: string,
  limits: WatchLimits,
  supervised: S,
): S & { done: Promise<WatchedFinish> } {
  const ended = usage.started(workspace);
  let stopped: string | undefined;
  let running = true;
  const stop = (why: string | undefined) => {
    if (why === undefined || stopped !== undefined) return;
    stopped = why;
    supervised.cancel();
  };
  const timers: { measure?: NodeJS.Timeout; disk?: NodeJS.Timeout } = {};
  const again = () => stopped === undefined && running;
  /** Started over the quota: the workspace's whole size at the first look (see WatchLimits.startedOver). */
  let bar: number | undefined;
  const measure = async () => {
    const started = performance.now();
    const held = (await limits.held?.().catch(() => 0)) ?? 0;
    if (limits.startedOver) {
      const bytes = (await usage.measure(workspace, Number.POSITIVE_INFINITY)) + held;
      bar ??= Math.max(bytes, limits.quota);
      if (bytes > bar) stop(overQuota(bytes, limits.quota, held));
    } else {
      const bytes = (await usage.measure(workspace, limits.quota)) + held;
      if (bytes > limits.quota) stop(overQuota(bytes, limits.quota, held));
    }
    const next = Math.max(QUOTA_CHECK_MS, 10 * (performance.now() - started));
    if (again()) timers.measure = setTimeout(measure, next).unref();
  };
  // On a clock of its own: a workspace of many files slows the walk, never this one look at the disk.
  const disk = async () => {
    stop(await diskShort(workspace, limits.diskReserve));
    if (again()) timers.disk = setTimeout(disk, QUOTA_CHECK_MS).unref();
  };
  timers.measure = setTimeout(measure, QUOTA_CHECK_MS).unref();
  if (limits.diskReserve > 0) timers.disk = setTimeout(disk, QUOTA_CHECK_MS).unref();
  const done = supervised.done.then((finished): WatchedFinish => {
    running = false;
    clearTimeout(timers.measure);
    clearTimeout(timers.disk);
    ended();
    if (stopped === undefined) {
      // What the run wrote counts for the next one; the answer does not wait for the walk.
      void usage.measure(workspace, limits.quota).catch(() => undefined);
      return finished;
    }
    return { ...finished, stderr: `${finished.stderr}\n[agentos] stopped: ${stopped}`, quotaStop: stopped };
  });
  return { ...supervised, done };
}

/**
 * Why the disk holding `path` is short of the free space it keeps, or undefined. Files a program
 * deleted but keeps open are not in any walk of its workspace, only in the disk's free space.
 */
async function diskShort(path: string, reserve: number): Promise<string | undefined> {
  if (reserve === 0) return undefined;
  const disk = await statfs(path).catch(() => null);
  if (!disk) return undefined;
  const free = disk.bavail * disk.bsize;
  if (free >= reserve) return undefined;
  return `the disk holding the workspaces has ${Math.floor(free / MiB)} MiB of free space left, less than the ${Math.floor(reserve / MiB)} MiB it keeps (deleted files still open count too; AGENTOS_SANDBOX_DISK_RESERVE_MB sets it)`;
}
