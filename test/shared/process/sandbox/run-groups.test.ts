import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox, type SandboxStatus } from "../../../../src/shared/process/sandbox/index.ts";
import { DEFAULT_ALLOWLIST, runCommand } from "../../../../src/workers/tools/command.ts";

/*
 * Four processes of one run each write 40 MiB: each stays under the per-process limit (64 MiB of
 * private memory), together they pass the run's 64 MiB.
 */
const HOG = `
import os, time
kids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        held = bytearray(b"\\x01") * (40 << 20)
        time.sleep(1)
        os._exit(0)
    kids.append(pid)
print("finished", sum(1 for pid in kids if os.waitpid(pid, 0)[1] == 0))
`;

let dir: string;
let sandbox: Sandbox;
let status: SandboxStatus;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "run-groups-"));
  sandbox = new Sandbox({
    env: { AGENTOS_SANDBOX_MEMORY_MB: "64" },
    dataDir: dir,
    policy: { allowPrivateNetwork: false, resolve: async () => [] },
  });
  status = await sandbox.ready();
});
afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

function workspace(name: string): string {
  const root = join(dir, "workspaces", name);
  mkdirSync(root, { recursive: true });
  return realpathSync(root);
}

describe("a control group per run", () => {
  it("holds a run's processes together to the run's memory, and says the kernel ended some", async (context) => {
    if (status.mode !== "on" || status.limits !== "run")
      context.skip(`no run groups here: ${JSON.stringify(status)}`);
    const ran = await runCommand(sandbox, workspace("hog"), DEFAULT_ALLOWLIST, {
      command: "python3",
      args: ["-c", HOG],
      timeoutMs: 30_000,
    });
    expect(ran.stdout, JSON.stringify(ran)).toMatch(/finished [0-3]\b/);
    expect(ran.stderr).toContain("reached its memory limit (64 MiB, AGENTOS_SANDBOX_MEMORY_MB)");
  });

  it("leaves no process in a run's group once the run is over, and keeps at most 16 empty groups for reuse", async (context) => {
    if (status.mode !== "on" || status.limits !== "run")
      context.skip(`no run groups here: ${JSON.stringify(status)}`);
    const runs = Array.from({ length: 20 }, () =>
      runCommand(sandbox, workspace("quiet"), DEFAULT_ALLOWLIST, {
        command: "python3",
        args: ["-c", "import time; time.sleep(0.3)"],
        timeoutMs: 10_000,
      }),
    );
    for (const ran of await Promise.all(runs)) expect(ran.exitCode, JSON.stringify(ran)).toBe(0);
    const services = serviceGroups();
    expect(services.length).toBeGreaterThan(0);
    for (const service of services) {
      const runGroups = readdirSync(service, { withFileTypes: true }).filter((entry) => entry.isDirectory());
      expect(runGroups.length).toBeLessThanOrEqual(16);
      for (const group of runGroups) {
        expect(readFileSync(join(service, group.name, "cgroup.procs"), "utf8")).toBe("");
      }
    }
  });
});

/** This process's service groups in the memory hierarchy (v1) or the unified one (v2). */
function serviceGroups(): string[] {
  const roots = ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"].filter((root) => existsSync(root));
  const found: string[] = [];
  const walk = (at: string, depth: number) => {
    if (depth > 4) return;
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      if (entry.name.startsWith(`agentos-sandbox-${process.pid}-`)) found.push(join(at, entry.name));
      else walk(join(at, entry.name), depth + 1);
    }
  };
  for (const root of roots) walk(root, 0);
  return found;
}

describe("groups of a service that died", () => {
  it("are emptied and removed when the next service opens its groups", async (context) => {
    if (status.mode !== "on" || status.limits !== "run")
      context.skip(`no run groups here: ${JSON.stringify(status)}`);
    const parent = dirname(serviceGroups()[0] as string);
    const dead = await deadPid();
    const stale = join(parent, `agentos-sandbox-${dead}-0`);
    mkdirSync(join(stale, "run-7"), { recursive: true });
    const sleeper = spawn("sleep", ["60"], { stdio: "ignore" });
    writeFileSync(join(stale, "run-7", "cgroup.procs"), String(sleeper.pid));
    const exited = new Promise((resolve) => sleeper.on("exit", (_code, signal) => resolve(signal)));
    const next = new Sandbox({
      env: {},
      dataDir: dir,
      policy: { allowPrivateNetwork: false, resolve: async () => [] },
    });
    try {
      expect(await next.ready()).toMatchObject({ mode: "on", limits: "run" });
      expect(await exited).toBe("SIGKILL");
      expect(existsSync(stale)).toBe(false);
    } finally {
      await next.close();
    }
  });
});

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn("true", [], { stdio: "ignore" });
  await new Promise((resolve) => child.on("exit", resolve));
  return child.pid as number;
}

/* Deleted files kept open, 8 MiB each, 256 MiB in all: far past a 16 MiB quota, in no walk of the workspace. */
const HOLD_DELETED = `
import os, json, time
held = []
chunk = b"x" * (1 << 20)
for i in range(32):
    f = open(f"held-{i}", "wb")
    os.unlink(f"held-{i}")
    for _ in range(8):
        f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
    held.append(f)
time.sleep(3)
print(json.dumps({"written": 256}))
`;

describe("deleted files a run keeps open", () => {
  it("count against its workspace's quota, so the run is stopped before the disk's reserve stops everyone", async (context) => {
    if (status.mode !== "on" || status.limits !== "run")
      context.skip(`no run groups here: ${JSON.stringify(status)}`);
    const quota = new Sandbox({
      env: { AGENTOS_WORKSPACE_QUOTA_MB: "16", AGENTOS_SANDBOX_DISK_RESERVE_MB: "0" },
      dataDir: dir,
      policy: { allowPrivateNetwork: false, resolve: async () => [] },
    });
    try {
      const ran = await runCommand(quota, workspace("holder"), DEFAULT_ALLOWLIST, {
        command: "python3",
        args: ["-c", HOLD_DELETED],
        timeoutMs: 60_000,
      });
      expect(ran.stdout, JSON.stringify(ran)).not.toContain('"written": 256');
      expect(ran.stderr).toMatch(
        /over its quota \(\d+ MiB of 16 MiB, \d+ MiB of them deleted files its programs kept open\)/,
      );
      expect(ran.timedOut).toBe(false);
    } finally {
      await quota.close();
    }
  });
});

describe("a run that cannot join its group", () => {
  it("never starts its program, and says why", async (context) => {
    if (status.mode !== "on" || status.limits !== "run")
      context.skip(`no run groups here: ${JSON.stringify(status)}`);
    // The host refusing the move (a delegation that allows mkdir but not the move, say).
    const groups = (sandbox as unknown as { groups: { create(): { admit(pid: number): Promise<void> } } })
      .groups;
    const create = groups.create.bind(groups);
    groups.create = () => ({ ...create(), admit: async () => Promise.reject(new Error("EACCES: refused")) });
    try {
      const root = workspace("refused");
      const ran = await runCommand(sandbox, root, DEFAULT_ALLOWLIST, {
        command: "python3",
        args: ["-c", "open('ran', 'w').write('outside its group')"],
        timeoutMs: 10_000,
      });
      expect(ran.stderr).toContain("could not join its control group (EACCES: refused)");
      expect(existsSync(join(root, "ran"))).toBe(false);
    } finally {
      groups.create = create;
    }
  });
});

describe("a process that exits without closing its sandbox", () => {
  it("removes its empty groups as it exits", async (context) => {
    if (status.mode !== "on" || status.limits !== "run")
      context.skip(`no run groups here: ${JSON.stringify(status)}`);
    const script = `import("./src/shared/process/sandbox/index.ts").then(async ({ Sandbox }) => {
      const sandbox = new Sandbox({ env: {}, dataDir: ${JSON.stringify(dir)}, policy: { allowPrivateNetwork: false, resolve: async () => [] } });
      console.log(JSON.stringify(await sandbox.ready()));
      process.exit(0);
    })`;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(child.stdout).toContain('"limits":"run"');
    const parent = dirname(serviceGroups()[0] as string);
    expect(readdirSync(parent).filter((name) => name.startsWith(`agentos-sandbox-${child.pid}-`))).toEqual(
      [],
    );
  });
});

describe("a sandbox closed while its start probe runs", () => {
  it("leaves none of its groups behind", async (context) => {
    if (status.mode !== "on" || status.limits !== "run")
      context.skip(`no run groups here: ${JSON.stringify(status)}`);
    const before = new Set(serviceGroups());
    const quick = new Sandbox({
      env: {},
      dataDir: dir,
      policy: { allowPrivateNetwork: false, resolve: async () => [] },
    });
    const probed = quick.ready();
    await quick.close();
    expect(await probed).toMatchObject({ mode: "on" });
    expect(serviceGroups().filter((group) => !before.has(group))).toEqual([]);
  });
});
