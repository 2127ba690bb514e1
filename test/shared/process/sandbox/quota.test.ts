import { randomBytes } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  diskUsage,
  ENTRY_BYTES,
  UsageCache,
  watchQuota,
} from "../../../../src/shared/process/sandbox/quota.ts";
import type { Finished } from "../../../../src/shared/process/supervise.ts";

const KiB = 1024;
const MiB = 1024 * KiB;

let base: string;
let root: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "quota-"));
  root = join(base, "workspace");
  mkdirSync(root);
});

afterEach(() => {
  vi.restoreAllMocks();
  rmSync(base, { recursive: true, force: true });
});

/** What one entry is charged: its allocated bytes, at least a block. */
const charged = (path: string) => Math.max(lstatSync(path).blocks * 512, ENTRY_BYTES);

/** Reference: charged bytes of everything below `dir` (not `dir` itself), links not followed. */
function allocated(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += charged(path);
    if (entry.isDirectory()) total += allocated(path);
  }
  return total;
}

function write(path: string, bytes: number): void {
  writeFileSync(path, randomBytes(bytes));
}

describe("diskUsage", () => {
  it("counts the allocated blocks of files in nested directories", async () => {
    mkdirSync(join(root, "a", "b", "c"), { recursive: true });
    mkdirSync(join(root, "d"));
    write(join(root, "top.bin"), 100 * KiB);
    write(join(root, "a", "one.bin"), 200 * KiB);
    write(join(root, "a", "b", "c", "deep.bin"), 300 * KiB);
    write(join(root, "d", "small.txt"), 10);
    const used = await diskUsage(root);
    expect(used).toBe(allocated(root));
    expect(used).toBeGreaterThanOrEqual(600 * KiB + 10);
    expect(used % 512).toBe(0);
  });

  it("is 0 for an empty directory and for one that does not exist", async () => {
    expect(await diskUsage(root)).toBe(0);
    expect(await diskUsage(join(base, "missing"))).toBe(0);
  });

  it("charges an entry without a block (an empty file, a link) a block: each takes an inode", async () => {
    mkdirSync(join(root, "empty"));
    for (let index = 0; index < 1000; index++) writeFileSync(join(root, "empty", String(index)), "");
    symlinkSync("nowhere", join(root, "link"));
    expect(await diskUsage(root)).toBe(allocated(root));
    expect(await diskUsage(root)).toBeGreaterThanOrEqual(1001 * ENTRY_BYTES);
  });

  it("counts blocks on disk, not the apparent size of a sparse file", async () => {
    const sparse = join(root, "sparse.img");
    writeFileSync(sparse, "");
    truncateSync(sparse, 256 * MiB);
    expect(lstatSync(sparse).size).toBe(256 * MiB);
    expect(await diskUsage(root)).toBe(charged(sparse));
    expect(await diskUsage(root)).toBeLessThan(MiB);
  });

  it("does not follow a symlink to a big file or a directory outside", async () => {
    const outside = join(base, "outside");
    mkdirSync(outside);
    write(join(outside, "big.bin"), 4 * MiB);
    write(join(root, "mine.bin"), 10 * KiB);
    const before = await diskUsage(root);
    symlinkSync(join(outside, "big.bin"), join(root, "link-to-file"));
    symlinkSync(outside, join(root, "link-to-dir"));
    symlinkSync(base, join(root, "link-to-parent")); // a loop, if followed
    const after = await diskUsage(root);
    expect(after).toBe(allocated(root));
    expect(after - before).toBe(
      ["link-to-file", "link-to-dir", "link-to-parent"].reduce(
        (sum, name) => sum + charged(join(root, name)),
        0,
      ),
    );
    expect(after).toBeLessThan(MiB);
  });

  it("stops early once past stopAbove, having counted more than it", async () => {
    for (let index = 0; index < 20; index++) {
      mkdirSync(join(root, `dir-${index}`));
      write(join(root, `dir-${index}`, "data.bin"), 64 * KiB);
    }
    const full = await diskUsage(root);
    expect(full).toBe(allocated(root));
    const stopAbove = 100 * KiB;
    const partial = await diskUsage(root, stopAbove);
    expect(partial).toBeGreaterThan(stopAbove);
    expect(partial).toBeLessThan(full);
    expect(await diskUsage(root, full)).toBe(full);
  });
});

describe("UsageCache", () => {
  const QUOTA = 100 * MiB;
  let now: number;

  beforeEach(() => {
    now = 1_700_000_000_000;
    vi.spyOn(Date, "now").mockImplementation(() => now);
  });

  it("answers from its last measure within the freshness window, then measures again", async () => {
    const cache = new UsageCache();
    write(join(root, "first.bin"), 64 * KiB);
    const first = await cache.current(root, QUOTA);
    expect(first).toBe(allocated(root));

    write(join(root, "second.bin"), 256 * KiB);
    now += 29_000;
    expect(await cache.current(root, QUOTA)).toBe(first);

    now += 1_000;
    const second = await cache.current(root, QUOTA);
    expect(second).toBe(allocated(root));
    expect(second).toBeGreaterThan(first);
  });

  it("refreshes the cached value on measure", async () => {
    const cache = new UsageCache();
    const empty = await cache.current(root, QUOTA);
    expect(empty).toBe(0);
    write(join(root, "grown.bin"), 128 * KiB);
    expect(await cache.current(root, QUOTA)).toBe(0);
    const measured = await cache.measure(root, QUOTA);
    expect(measured).toBe(allocated(root));
    expect(measured).toBeGreaterThanOrEqual(128 * KiB);
    expect(await cache.current(root, QUOTA)).toBe(measured);
  });

  it("measures again after forget", async () => {
    const cache = new UsageCache();
    expect(await cache.current(root, QUOTA)).toBe(0);
    write(join(root, "new.bin"), 32 * KiB);
    cache.forget(root);
    expect(await cache.current(root, QUOTA)).toBe(allocated(root));
  });

  it("counts bytes added by the service until the next measure", async () => {
    const cache = new UsageCache();
    expect(await cache.current(root, QUOTA)).toBe(0);
    cache.add(root, 5000);
    cache.add(root, 1000);
    expect(await cache.current(root, QUOTA)).toBe(6000);
    expect(await cache.measure(root, QUOTA)).toBe(0);
    const unknown = join(base, "never-measured");
    cache.add(unknown, 5000);
    expect(await cache.current(unknown, QUOTA)).toBe(0);
  });

  it("keeps each workspace's size apart", async () => {
    const other = join(base, "other");
    mkdirSync(other);
    write(join(other, "x.bin"), 64 * KiB);
    const cache = new UsageCache();
    expect(await cache.current(root, QUOTA)).toBe(0);
    expect(await cache.current(other, QUOTA)).toBe(allocated(other));
    expect(await cache.current(root, QUOTA)).toBe(0);
  });

  it("measures instead of trusting its last size while a watched program runs, and after it ends", async () => {
    const cache = new UsageCache();
    expect(await cache.current(root, QUOTA)).toBe(0);
    const first = cache.started(root);
    const second = cache.started(root);
    // Written by a running program within the freshness window: a run started now sees it.
    write(join(root, "running.bin"), 64 * KiB);
    expect(await cache.current(root, QUOTA)).toBe(allocated(root));
    first();
    first(); // once only: the second program still runs
    write(join(root, "more.bin"), 64 * KiB);
    expect(await cache.current(root, QUOTA)).toBe(allocated(root));
    second();
    // Ended: what it wrote last is measured by the next run, then trusted again.
    write(join(root, "last.bin"), 64 * KiB);
    const after = await cache.current(root, QUOTA);
    expect(after).toBe(allocated(root));
    write(join(root, "unseen.bin"), 64 * KiB);
    expect(await cache.current(root, QUOTA)).toBe(after);
  });

  it("passes the quota on as where to stop measuring", async () => {
    for (let index = 0; index < 10; index++) {
      mkdirSync(join(root, `dir-${index}`));
      write(join(root, `dir-${index}`, "data.bin"), 64 * KiB);
    }
    const cache = new UsageCache();
    const quota = 80 * KiB;
    const measured = await cache.current(root, quota);
    expect(measured).toBeGreaterThan(quota);
    expect(measured).toBeLessThan(allocated(root));
  });
});

describe("watchQuota, for a run started over its workspace's quota", () => {
  /** A program that runs until `end` (or a cancel), as supervise answers it. */
  function program() {
    let end = (_reason: "exited" | "cancelled") => undefined as unknown;
    const done = new Promise<Finished>((resolve) => {
      end = (reason) =>
        resolve({
          reason,
          exitCode: reason === "exited" ? 0 : null,
          signal: null,
          stdout: "",
          stderr: "",
          truncated: false,
        });
    });
    return { pid: 1, done, cancel: () => end("cancelled"), end: () => end("exited") };
  }

  function overQuotaWorkspace(files: number): number {
    mkdirSync(join(root, "tree"));
    for (let index = 0; index < files; index++) writeFileSync(join(root, "tree", `f${index}`), "");
    return (files * ENTRY_BYTES) / 4;
  }

  it("lets a program that deletes files run on while the workspace is still over it (rm -r of a large tree)", async () => {
    const quota = overQuotaWorkspace(200);
    const cache = new UsageCache();
    const looks = vi.spyOn(cache, "measure");
    const run = program();
    const watched = watchQuota(cache, root, { quota, diskReserve: 0, startedOver: true }, run);
    // 40 files deleted after each of three looks: still over the quota at every one of them.
    for (let look = 1; look <= 3; look++) {
      await vi.waitFor(() => expect(looks.mock.calls.length).toBeGreaterThanOrEqual(look), { timeout: 5000 });
      await looks.mock.results[look - 1]?.value;
      for (let index = 0; index < 40; index++) rmSync(join(root, "tree", `f${(look - 1) * 40 + index}`));
    }
    await vi.waitFor(() => expect(looks.mock.calls.length).toBeGreaterThanOrEqual(4), { timeout: 5000 });
    run.end();
    const finished = await watched.done;
    expect(finished.reason).toBe("exited");
    expect(finished.quotaStop).toBeUndefined();
  });

  it("stops a program that makes the workspace grow further", async () => {
    const quota = overQuotaWorkspace(200);
    const cache = new UsageCache();
    const looks = vi.spyOn(cache, "measure");
    const run = program();
    const watched = watchQuota(cache, root, { quota, diskReserve: 0, startedOver: true }, run);
    await vi.waitFor(() => expect(looks.mock.calls.length).toBeGreaterThanOrEqual(1), { timeout: 5000 });
    // The first look done (its size is the bar), the program makes more files.
    await looks.mock.results[0]?.value;
    for (let index = 0; index < 50; index++) writeFileSync(join(root, `new-${index}`), "");
    const finished = await watched.done;
    expect(finished.reason).toBe("cancelled");
    expect(finished.quotaStop).toContain("over its quota");
  });
});
