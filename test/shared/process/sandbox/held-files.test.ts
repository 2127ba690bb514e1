import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { deletedOpenBytes, deviceNumber } from "../../../../src/shared/process/sandbox/held-files.ts";
import { Sandbox, type SandboxStatus } from "../../../../src/shared/process/sandbox/index.ts";
import { DEFAULT_ALLOWLIST, runCommand } from "../../../../src/workers/tools/command.ts";

const MiB = 1024 * 1024;

/*
 * A file mapped with mmap stays on the disk after it is deleted and its last descriptor closed: nothing
 * in /proc/<pid>/fd names it, only the process's mappings. (Python's own mmap module keeps a duplicate
 * descriptor, so the mapping is made through libc, as a hostile program would.) `count` files of 10 MiB.
 */
const mapDeleted = (count: number) => `
import os, sys, time, ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
for i in range(${count}):
    fd = os.open(f"mapped-{i}", os.O_CREAT | os.O_RDWR, 0o600)
    for _ in range(10): os.write(fd, b"x" * (1 << 20))
    os.fsync(fd)
    # PROT_READ, MAP_SHARED, one page of it: the whole file stays.
    assert libc.mmap(None, 4096, 1, 1, fd, 0) != ctypes.c_void_p(-1).value
    os.close(fd)
    os.unlink(f"mapped-{i}")
print("held", flush=True)
time.sleep(4)
print("never stopped", flush=True)
`;

let dir: string;
const children: ChildProcess[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "held-files-"));
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function workspace(name: string): string {
  const root = join(dir, "workspaces", name);
  mkdirSync(root, { recursive: true });
  return realpathSync(root);
}

describe("deletedOpenBytes", () => {
  it("counts a deleted file a process only maps, its descriptor closed", async () => {
    const cwd = workspace("mapper");
    const child = spawn("python3", ["-c", mapDeleted(2)], { cwd, stdio: ["ignore", "pipe", "inherit"] });
    children.push(child);
    await new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()));
    const held = await deletedOpenBytes([child.pid as number], statSync(cwd).dev);
    expect(held).toBeGreaterThanOrEqual(4096 * 2);
    // The whole files where the service may look at the mapped file (root), not just the mapped page.
    if (process.getuid?.() === 0) expect(held).toBeGreaterThanOrEqual(20 * MiB);
  });

  it("reads device numbers as stat gives them", () => {
    expect(deviceNumber(254, 0)).toBe(0xfe00);
    expect(deviceNumber(8, 17)).toBe(0x811);
    expect(deviceNumber(259, 300)).toBe(((300 & 0xff) | (259 << 8) | ((300 & ~0xff) << 12)) >>> 0);
  });
});

describe("a run that maps deleted files", () => {
  let sandbox: Sandbox;
  let status: SandboxStatus;
  beforeAll(async () => {
    sandbox = new Sandbox({
      env: { AGENTOS_WORKSPACE_QUOTA_MB: "16", AGENTOS_SANDBOX_DISK_RESERVE_MB: "0" },
      dataDir: dir,
      policy: { allowPrivateNetwork: false, resolve: async () => [] },
    });
    status = await sandbox.ready();
  });
  afterAll(() => sandbox.close());

  it("is stopped by its workspace's quota, as one holding them open is", async (context) => {
    if (status.mode !== "on" || status.limits !== "run")
      context.skip(`no run groups here: ${JSON.stringify(status)}`);
    const ran = await runCommand(sandbox, workspace("run"), DEFAULT_ALLOWLIST, {
      command: "python3",
      args: ["-c", mapDeleted(4)],
      timeoutMs: 30_000,
    });
    expect(ran.stdout, JSON.stringify(ran)).not.toContain("never stopped");
    expect(ran.stderr).toMatch(/over its quota \(\d+ MiB of 16 MiB, \d+ MiB of them deleted files/);
    expect(ran.timedOut).toBe(false);
  });
});
