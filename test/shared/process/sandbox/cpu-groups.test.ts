import { spawn } from "node:child_process";
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
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCpuGroup } from "../../../../src/shared/process/sandbox/cgroup-cpu.ts";
import { Sandbox, type SandboxStatus } from "../../../../src/shared/process/sandbox/index.ts";

/** Two processes, the second in a session of its own (a new scheduler autogroup), both in the run until `stop` appears. */
const TWO_SESSIONS = `
import os, time
pid = os.fork()
if pid == 0:
    os.setsid()
    open("ready", "w").close()
while not os.path.exists("stop"):
    time.sleep(0.05)
if pid:
    os.waitpid(pid, 0)
`;

const policy = { allowPrivateNetwork: false, resolve: async () => [] };
let dir: string;
let sandbox: Sandbox;
let status: SandboxStatus;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "cpu-groups-"));
  sandbox = new Sandbox({
    env: { AGENTOS_SANDBOX_CPU_WEIGHT: "40", AGENTOS_SANDBOX_CPU_CORES: "1.5" },
    dataDir: dir,
    policy,
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

/** The mount point of the v1 cpu hierarchy, if any. */
function cpuMount(): string | null {
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [before, after] = line.split(" - ");
    const [fstype, , options = ""] = (after ?? "").split(" ");
    if (fstype === "cgroup" && options.split(",").includes("cpu")) return before?.split(" ")[4] ?? null;
  }
  return null;
}

/** `pid`'s group in the v1 cpu hierarchy, as a directory. */
function cpuGroupOf(pid: number, mount: string): string | null {
  const line = readFileSync(`/proc/${pid}/cgroup`, "utf8")
    .split("\n")
    .find((entry) => /^\d+:[^:]*\bcpu\b[^:]*:/.test(entry));
  return line ? join(mount, line.split(":")[2] ?? "") : null;
}

const procsIn = (group: string) =>
  readFileSync(join(group, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);

describe("the CPU of sandboxed runs", () => {
  it("puts every process of a run, new sessions too, in a group of its own under one weighted group of all runs", async (context) => {
    const mount = cpuMount();
    if (status.mode !== "on" || status.limits !== "run" || !mount)
      context.skip(`no v1 cpu run groups here: ${JSON.stringify(status)}`);
    expect(status).toMatchObject({ mode: "on", limits: "run", cpu: "weighted" });
    const root = workspace("two-sessions");
    const started = await sandbox.start(
      { workspace: root, executable: "/usr/bin/python3", args: ["-c", TWO_SESSIONS] },
      { timeoutMs: 20_000 },
    );
    try {
      for (let waited = 0; !existsSync(join(root, "ready")) && waited < 10_000; waited += 50) await sleep(50);
      const runGroup = cpuGroupOf(started.pid as number, mount as string) as string;
      const services = dirname(runGroup);
      expect(services).toMatch(new RegExp(`/agentos-sandbox-${process.pid}-\\d+$`));
      // Both python processes (the one that called setsid among them) and the sandbox's own.
      const pythons = procsIn(runGroup).filter((pid) =>
        readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("/usr/bin/python3"),
      );
      expect(pythons).toHaveLength(2);
      expect(
        new Set(pythons.map((pid) => readFileSync(`/proc/${pid}/stat`, "utf8").split(" ")[5])).size,
      ).toBe(2);
      expect(readFileSync(join(services, "cpu.shares"), "utf8").trim()).toBe(String(Math.round(1024 * 0.4)));
      expect(readFileSync(join(services, "cpu.cfs_quota_us"), "utf8").trim()).toBe("150000");
      expect(readFileSync(join(services, "cpu.cfs_period_us"), "utf8").trim()).toBe("100000");
      writeFileSync(join(root, "stop"), "");
      expect((await started.done).exitCode).toBe(0);
      expect(procsIn(runGroup)).toEqual([]);
    } finally {
      started.cancel();
      await started.done;
    }
  });

  it("removes the service's cpu group when the sandbox closes, and sweeps those of services that died", async (context) => {
    const mount = cpuMount();
    if (status.mode !== "on" || status.limits !== "run" || !mount)
      context.skip(`no v1 cpu run groups here: ${JSON.stringify(status)}`);
    const parent = cpuGroupOf(process.pid, mount as string) as string;
    const dead = await deadPid();
    const stale = join(parent, `agentos-sandbox-${dead}-0`);
    mkdirSync(join(stale, "run-3"), { recursive: true });
    const sleeper = spawn("sleep", ["60"], { stdio: "ignore" });
    writeFileSync(join(stale, "run-3", "cgroup.procs"), String(sleeper.pid));
    const exited = new Promise((resolve) => sleeper.on("exit", (_code, signal) => resolve(signal)));
    const ours = () =>
      readdirSync(parent).filter((name) => name.startsWith(`agentos-sandbox-${process.pid}-`));
    const before = new Set(ours());
    const next = new Sandbox({ env: {}, dataDir: dir, policy });
    try {
      expect(await next.ready()).toMatchObject({ mode: "on", cpu: "weighted" });
      expect(await exited).toBe("SIGKILL");
      expect(existsSync(stale)).toBe(false);
      const made = ours().filter((name) => !before.has(name));
      expect(made).toHaveLength(1);
      expect(readFileSync(join(parent, made[0] as string, "cpu.shares"), "utf8").trim()).toBe("256");
      expect(readFileSync(join(parent, made[0] as string, "cpu.cfs_quota_us"), "utf8").trim()).toBe("-1");
    } finally {
      await next.close();
    }
    expect(ours().filter((name) => !before.has(name))).toEqual([]);
  });

  it("leaves the cpu group out, and keeps the memory and process groups, where a run cannot join it", async (context) => {
    const mount = cpuMount();
    if (status.mode !== "on" || status.limits !== "run" || !mount)
      context.skip(`no v1 cpu run groups here: ${JSON.stringify(status)}`);
    const next = new Sandbox({ env: {}, dataDir: dir, policy });
    try {
      await next.ready();
      const groups = (next as unknown as { groups: { dropCpu(reason: string): boolean } }).groups;
      const root = workspace("cpu-dropped");
      const first = await next.start(
        { workspace: root, executable: "/usr/bin/true", args: [] },
        { timeoutMs: 20_000 },
      );
      await first.done;
      const parent = cpuGroupOf(process.pid, mount as string) as string;
      const ours = () =>
        readdirSync(parent).filter((name) => name.startsWith(`agentos-sandbox-${process.pid}-`));
      const before = ours();
      expect(groups.dropCpu("refused")).toBe(true);
      expect(groups.dropCpu("again")).toBe(false);
      // This sandbox's cpu group (and the idle run group in it) is gone; the other sandbox's stays.
      expect(ours()).toHaveLength(before.length - 1);
      const started = await next.start(
        { workspace: root, executable: "/usr/bin/python3", args: ["-c", TWO_SESSIONS] },
        { timeoutMs: 20_000 },
      );
      try {
        for (let waited = 0; !existsSync(join(root, "ready")) && waited < 10_000; waited += 50)
          await sleep(50);
        expect(cpuGroupOf(started.pid as number, mount as string)).toBe(parent);
        const memory = readFileSync(`/proc/${started.pid}/cgroup`, "utf8")
          .split("\n")
          .find((entry) => /^\d+:memory:/.test(entry));
        expect(memory).toMatch(/agentos-sandbox-\d+-\d+\/run-\d+$/);
        writeFileSync(join(root, "stop"), "");
        expect((await started.done).exitCode).toBe(0);
      } finally {
        started.cancel();
        await started.done;
      }
    } finally {
      await next.close();
    }
  });

  it("says in the status that runs' CPU is not weighted without run groups, and why", async () => {
    const off = new Sandbox({ env: { AGENTOS_SANDBOX_RUN_GROUPS: "off" }, dataDir: dir, policy });
    try {
      const offStatus = await off.ready();
      if (offStatus.mode !== "on") return;
      expect(offStatus).toMatchObject({
        cpu: "unweighted",
        cpuReason: "AGENTOS_SANDBOX_RUN_GROUPS=off",
      });
    } finally {
      await off.close();
    }
  });
});

describe("openCpuGroup", () => {
  const limits = { weightPercent: 25, cores: 1.5 };

  it("says why where no v1 cpu hierarchy is mounted", () => {
    expect(openCpuGroup({ version: 1, memory: "/m", pids: null, cpu: null }, "s", "/m/s", limits)).toEqual({
      reason: "no cgroup v1 cpu hierarchy is mounted",
    });
  });

  it("says why where the unified hierarchy does not give this process the cpu controller", () => {
    const group = mkdtempSync(join(tmpdir(), "cpu-v2-"));
    try {
      writeFileSync(join(group, "cgroup.controllers"), "memory pids\n");
      expect(openCpuGroup({ version: 2, dir: group }, "s", join(group, "s"), limits)).toEqual({
        reason: `the cpu controller is not available to this process's cgroup (${group})`,
      });
    } finally {
      rmSync(group, { recursive: true, force: true });
    }
  });

  it("with v2, enables cpu for the service's runs and weighs them (cpu.weight, cpu.max)", () => {
    const group = mkdtempSync(join(tmpdir(), "cpu-v2-"));
    const service = join(group, "s");
    try {
      mkdirSync(service);
      writeFileSync(join(group, "cgroup.controllers"), "cpu memory pids\n");
      writeFileSync(join(group, "cgroup.subtree_control"), "memory pids\n");
      writeFileSync(join(service, "cgroup.subtree_control"), "memory pids\n");
      expect(openCpuGroup({ version: 2, dir: group }, "s", service, limits)).toEqual({ dir: null });
      // A file, not the kernel's: it keeps the last write (the kernel adds it to what is enabled).
      expect(readFileSync(join(group, "cgroup.subtree_control"), "utf8")).toBe("+cpu");
      expect(readFileSync(join(service, "cgroup.subtree_control"), "utf8")).toBe("+cpu");
      expect(readFileSync(join(service, "cpu.weight"), "utf8")).toBe("25");
      expect(readFileSync(join(service, "cpu.max"), "utf8")).toBe("150000 100000");
    } finally {
      rmSync(group, { recursive: true, force: true });
    }
  });
});

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn("true", [], { stdio: "ignore" });
  await new Promise((resolve) => child.on("exit", resolve));
  return child.pid as number;
}
