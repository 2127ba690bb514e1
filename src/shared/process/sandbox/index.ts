import { chownSync, closeSync, constants, mkdirSync, openSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppError } from "../../errors.ts";
import type { NetworkPolicy } from "../../net/guarded-request.ts";
import { type ExtraStdio, type Launch, SAFE_PATH, type Supervised, supervise } from "../supervise.ts";
import { type Attached, attached } from "./attached.ts";
import { accounts, bwrapArgs, type Descriptors, INSIDE, insidePath, SANDBOX_UID } from "./bwrap.ts";
import { type RunGroup, RunGroups } from "./cgroups.ts";
import { EgressGate, PROXY_ENV, relayed, relayScriptSource } from "./egress.ts";
import { HostPrograms, type SandboxStatus, unavailable } from "./host.ts";
import { etcCopy, systemLayout } from "./layout.ts";
import { chownTreeSync, isWorkspaceUid, killAllOf, type Owner, workspaceOwner } from "./owner.ts";
import { WorkspacePrograms } from "./programs.ts";
import { overQuota, UsageCache, watchQuota } from "./quota.ts";
import { admission, admitOrStop, heldBy, releasedAfter } from "./run-admission.ts";
import { seccompFilter } from "./seccomp.ts";
import { type SandboxSettings, sandboxSettings } from "./settings.ts";
import { ShippedBinds, shippedDirs } from "./shipped.ts";

/** Network reach granted to an agent's programs: through the service's guarding proxy only. */
export interface Egress {
  /** Whose proxy (one per agent). */
  key: string;
  /** Hosts allowed (and their subdomains); null for any public host. */
  allowDomains: string[] | null;
}

export type { SandboxStatus };

/** One program to start for a workspace. Paths are the host's; the sandbox maps them. */
export interface ConfinedRun {
  workspace: string;
  executable: string;
  args: string[];
  /** On top of the base environment (PATH, HOME, TMPDIR, LANG, USER). */
  env?: Record<string, string>;
  cwd?: string;
  egress?: Egress | null;
  /** More directories of the host the program may write in, bound where each says (a snapshot's copy). */
  binds?: Array<{ host: string; inside: string }>;
  /** The largest file it may write, instead of what the workspace's quota leaves. */
  fileLimitBytes?: number;
}

export type { Attached } from "./attached.ts";

/** A start ready for `spawn`: the command line, environment, identity and extra descriptors. */
interface Prepared {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  extraStdio: ExtraStdio[];
  /** Closes the descriptors handed to the child; call once it is spawned. */
  release(): void;
  /** What the workspace's quota left when the run started (0: over it, or none for confinement off). */
  room?: number;
  /** The run's control group, released once the run is over. */
  group?: RunGroup;
  /**
   * Moves the spawned process (`pid`) and what it started into the run's group, then lets the sandbox,
   * waiting on its block descriptor, start the program; rejects (the sandbox never starts it) when the
   * group cannot be joined.
   */
  admit?: (pid: number | null) => Promise<void>;
}

const MiB = 1024 * 1024;
/** The highest: a confined process is the first the kernel's OOM killer ends. */
const OOM_SCORE_ADJ = 1000;

/** Each service's last probe verdict, by its data directory (several services may share a process). */
const statuses = new Map<string, SandboxStatus>();
/** The last probe's verdict of the service on `dataDir` (for /api/health); undefined before any probe. */
export function sandboxStatus(dataDir: string): SandboxStatus | undefined {
  return statuses.get(dataDir);
}

/**
 * The one way agents' tools start processes: each program runs under bubblewrap as an unprivileged uid
 * of its workspace, sees only its workspace, a private /tmp and the read-only system, has no network
 * (or the guarding proxy when granted egress), a seccomp filter, and resource limits. Where the host
 * cannot provide this, every start is refused with what to install, unless the operator opted out.
 */
export class Sandbox {
  readonly settings: SandboxSettings;
  private readonly host: HostPrograms;
  private readonly egress: EgressGate;
  private readonly usage = new UsageCache();
  private readonly programs = new WorkspacePrograms();
  private probing: Promise<SandboxStatus> | undefined;
  private readonly shipped = new ShippedBinds(shippedDirs());
  private readonly layout = systemLayout();
  /** The process's copy of the system's /etc entries (etcCopy), opened for binding. */
  private etcFd: number | undefined;
  private readonly dataDir: string;
  /** Control groups for runs, where this host gives them (per-process limits only otherwise). */
  private groups: RunGroups | undefined;

  constructor(options: { env: NodeJS.ProcessEnv; dataDir: string; policy: NetworkPolicy }) {
    this.dataDir = options.dataDir;
    this.settings = sandboxSettings(options.env);
    this.host = new HostPrograms(options.env);
    this.egress = new EgressGate(options.policy, join(options.dataDir, "sandbox", "egress"));
  }

  /** The verdict of the start probe (a confined `true`), run once. */
  ready(): Promise<SandboxStatus> {
    this.probing ??= this.probe().then((status) => {
      statuses.set(this.dataDir, status);
      return status;
    });
    return this.probing;
  }

  /** Where commands are looked up on the host: the Node the project ships first, then the system's. */
  get searchPath(): string {
    const nodeBin = this.shipped.nodeBin;
    return nodeBin ? `${nodeBin}:${SAFE_PATH}` : SAFE_PATH;
  }

  /** A workspace path as the program sees it. */
  pathOf(workspace: string, hostPath: string): string {
    return this.settings.enabled ? insidePath(workspace, hostPath) : hostPath;
  }

  /** Starts `run` supervised, confined; refused (503) when the sandbox is unavailable. */
  async start(
    run: ConfinedRun,
    limits: Omit<Launch, "command" | "args" | "env" | "cwd">,
  ): Promise<Supervised> {
    return this.launch(run, (prepared) => supervise({ ...limits, ...prepared, inherit: [] }));
  }

  /**
   * Starts `run` confined for a caller that drives it over its pipes (a language server): the same
   * confinement and quota watch as `start`, without a timeout or output limit of its own (the caller
   * has its own and cancels). Refused (503) when the sandbox is unavailable.
   */
  attach(run: ConfinedRun, options: { maxStderrBytes?: number } = {}): Promise<Attached> {
    return this.launch(run, (prepared) => attached(prepared, options.maxStderrBytes ?? 4000));
  }

  /**
   * The one way a confined process is started: prepared, spawned by `spawn`, and (sandbox on) watched
   * against the workspace quota, stopped once the workspace grows past it.
   */
  private async launch<S extends Supervised>(run: ConfinedRun, spawn: (prepared: Prepared) => S): Promise<S> {
    this.programs.assertOpen(run.workspace);
    const prepared = await this.prepare(run);
    let started: S;
    try {
      // Checked again: the workspace may have been closed while the launch was prepared.
      this.programs.assertOpen(run.workspace);
      started = spawn(prepared);
    } catch (error) {
      void prepared.group?.release();
      throw error;
    } finally {
      prepared.release();
    }
    if (prepared.group) {
      const admitted = admitOrStop(prepared, started);
      const memoryBytes = this.settings.limits.memoryBytes;
      started = { ...started, done: releasedAfter(started.done, prepared.group, admitted, memoryBytes) };
    }
    const watched = this.settings.enabled
      ? watchQuota(
          this.usage,
          run.workspace,
          {
            quota: this.settings.limits.workspaceQuotaBytes,
            diskReserve: this.settings.limits.diskReserveBytes,
            ...heldBy(prepared.group, run.workspace),
            startedOver: prepared.room === 0,
          },
          started,
        )
      : started;
    return this.programs.track(run.workspace, watched);
  }

  /** The launch of `run`: only `launch` spawns it, so no confined process escapes the quota watch. */
  private async prepare(run: ConfinedRun): Promise<Prepared> {
    const status = await this.ready();
    if (status.mode === "unavailable") {
      throw new AppError("unavailable", `Programs cannot run: the sandbox is unavailable (${status.reason})`);
    }
    if (status.mode === "off") return this.unconfined(run);
    const quota = this.settings.limits.workspaceQuotaBytes;
    // Over the quota, a program may still run (to delete files) but cannot write a byte.
    const used = await this.usage.current(run.workspace, quota);
    const owner = workspaceOwner(run.workspace);
    if (owner) adopt(run.workspace, owner);
    const socketDir = run.egress
      ? await this.egress.socketDir(run.egress.key, run.egress.allowDomains)
      : null;
    const room = Math.max(0, quota - used);
    return { ...this.confined(run, owner, socketDir, room), room };
  }

  /** Refuses (413) a write of `bytes` by the service itself that would take the workspace past its quota. */
  async checkRoom(workspace: string, bytes: number): Promise<void> {
    if (!this.settings.enabled) return;
    const quota = this.settings.limits.workspaceQuotaBytes;
    const used = await this.usage.current(workspace, quota);
    if (used + bytes > quota) throw new AppError("payload_too_large", overQuota(used + bytes, quota));
    this.usage.add(workspace, bytes);
  }

  /**
   * Runs `work` (a change of the workspace's files as a whole: a restore, a delete) with no program of
   * the workspace running: those this service started are ended first (and, as root, every process of
   * the workspace's uid), and none may start until `work` is done. None can then race the change by
   * swapping a directory for a link under it.
   */
  withoutPrograms<T>(workspace: string, work: () => Promise<T>): Promise<T> {
    return this.programs.without(workspace, () => this.stopPrograms(workspace), work);
  }

  private async stopPrograms(workspace: string): Promise<void> {
    await this.programs.stop(workspace);
    const owner = this.settings.enabled ? workspaceOwner(workspace) : null;
    if (owner) await killAllOf(owner.uid);
  }

  async close(): Promise<void> {
    // A probe under way finishes first: it holds a run group (and the /etc copy) until it is done.
    await this.probing;
    statuses.delete(this.dataDir);
    await this.egress.close();
    this.shipped.close();
    if (this.etcFd !== undefined) closeSync(this.etcFd);
    this.etcFd = undefined;
    await this.groups?.close();
    this.groups = undefined;
  }

  private confined(run: ConfinedRun, owner: Owner | null, socketDir: string | null, room: number): Prepared {
    const opened: number[] = [];
    try {
      return this.launchOf(run, owner, socketDir, room, opened);
    } catch (error) {
      // A directory that could not be opened: the descriptors opened before it are not leaked.
      for (const fd of opened) closeSync(fd);
      throw error;
    }
  }

  private launchOf(
    run: ConfinedRun,
    owner: Owner | null,
    socketDir: string | null,
    room: number,
    opened: number[],
  ): Prepared {
    const limits = this.settings.limits;
    const extra: ExtraStdio[] = [];
    const pass = (entry: ExtraStdio) => extra.push(entry) + 2;
    const openDir = (path: string) => {
      const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
      opened.push(fd);
      return pass(fd);
    };
    const seccomp = seccompFilter();
    const nodeInside = this.shipped.nodeBin ? `${INSIDE.node}/bin` : null;
    const { passwd, group } = accounts(owner?.uid ?? SANDBOX_UID);
    const fds: Descriptors = {
      workspace: openDir(run.workspace),
      passwd: pass(Buffer.from(passwd)),
      group: pass(Buffer.from(group)),
      ...(seccomp ? { seccomp: pass(seccomp) } : {}),
      shipped: this.shipped.descriptors().map(({ fd, inside }) => ({ fd: pass(fd), inside })),
      binds: (run.binds ?? []).map(({ host, inside }) => ({ fd: openDir(host), inside })),
      ...(this.etcFd === undefined ? {} : { etc: pass(this.etcFd) }),
    };
    const map = (path: string) => this.shipped.insideOf(path) ?? insidePath(run.workspace, path);
    let command = [map(run.executable), ...run.args.map(map)];
    const env: Record<string, string> = {
      PATH: nodeInside ? `${nodeInside}:${SAFE_PATH}` : SAFE_PATH,
      HOME: INSIDE.workspace,
      TMPDIR: "/tmp",
      LANG: "C.UTF-8",
      USER: "agent",
      LOGNAME: "agent",
      ...run.env,
    };
    if (socketDir) {
      fds.egress = openDir(socketDir);
      fds.relay = pass(relayScriptSource());
      command = relayed(command, nodeInside ? `${nodeInside}/node` : "/usr/bin/node");
      Object.assign(env, PROXY_ENV);
    }
    // Set inside, once bubblewrap has made the sandbox (the file size limit would stop its own writes).
    const rlimits = [
      this.host.prlimit as string,
      `--data=${limits.memoryBytes}`,
      `--cpu=${limits.cpuSeconds}`,
      `--nproc=${limits.processes}`,
      `--fsize=${run.fileLimitBytes ?? Math.min(limits.fileBytes, room)}`,
      `--nofile=${limits.openFiles}`,
      "--core=0",
      "--",
    ];
    // The sandbox waits, before it starts the program, until its processes are in the run's group.
    const runGroup = this.groups?.create();
    const gate = runGroup ? admission(runGroup) : undefined;
    if (gate) fds.block = pass(gate);
    const args = bwrapArgs({
      identity: owner
        ? { kind: "root", uid: owner.uid, setpriv: this.host.setpriv as string }
        : { kind: "user" },
      layout: this.layout,
      fds,
      tmpBytes: limits.tmpBytes,
      cwd: map(run.cwd ?? run.workspace),
      command: [...rlimits, ...command],
    });
    // Limits are per process, so a run's many processes can still exhaust the machine's memory: then the
    // kernel must end them, not the service. Set by a root service, the score cannot be lowered again.
    const choom = this.host.choom;
    return {
      command: choom ?? (this.host.bwrap as string),
      args: choom ? ["-n", String(OOM_SCORE_ADJ), "--", this.host.bwrap as string, ...args] : args,
      env,
      cwd: "/",
      extraStdio: extra,
      release: () => {
        for (const fd of opened.splice(0)) closeSync(fd);
      },
      ...(runGroup && gate ? { group: runGroup, admit: gate.admit } : {}),
    };
  }

  /** The operator's opt-out: as before the sandbox existed (minimal environment, workspace as HOME). */
  private unconfined(run: ConfinedRun): Prepared {
    const tmp = join(run.workspace, ".tmp");
    mkdirSync(tmp, { recursive: true });
    return {
      command: run.executable,
      args: run.args,
      env: { PATH: SAFE_PATH, HOME: run.workspace, TMPDIR: tmp, LANG: "C.UTF-8", ...run.env },
      cwd: run.cwd ?? run.workspace,
      extraStdio: [],
      release: () => undefined,
    };
  }

  /**
   * Control groups for runs where the host gives them; otherwise why limits hold per process only (and
   * why runs' CPU is not weighted against the service's).
   */
  private async openGroups(): Promise<GroupsScope> {
    if (!this.settings.runGroups) return perProcess("AGENTOS_SANDBOX_RUN_GROUPS=off");
    const limits = this.settings.limits;
    const groups = await RunGroups.open({
      runMemoryBytes: limits.memoryBytes,
      totalMemoryBytes: limits.totalMemoryBytes,
      runProcesses: limits.processes,
      cpu: { weightPercent: limits.cpuWeightPercent, cores: limits.cpuCores },
    });
    if ("reason" in groups) return perProcess(groups.reason);
    this.groups = groups;
    return groups.cpuReason === null
      ? { limits: "run", cpu: "weighted" }
      : { limits: "run", cpu: "unweighted", cpuReason: groups.cpuReason };
  }

  private async probe(): Promise<SandboxStatus> {
    if (!this.settings.enabled) return { mode: "off" };
    const missing = this.host.missing();
    if (missing) return missing;
    try {
      this.etcFd = openSync(etcCopy(this.layout.etc), constants.O_RDONLY | constants.O_DIRECTORY);
    } catch {
      // Each entry is bound on its own instead (slower to start, the same view).
    }
    const limitsScope = await this.openGroups();
    const workspace = await mkdtemp(join(tmpdir(), "agentos-probe-"));
    try {
      const failed = await this.tryConfined(workspace);
      if (!failed) return { mode: "on", ...limitsScope };
      if (!this.groups) return unavailable(failed);
      // The cpu hierarchy alone refusing the move keeps the memory and process groups.
      if (this.groups.dropCpu(`a run could not join the runs' cpu group (${failed})`)) {
        const again = await this.tryConfined(workspace);
        if (!again)
          return {
            ...limitsScope,
            mode: "on",
            cpu: "unweighted",
            cpuReason: this.groups.cpuReason ?? failed,
          };
      }
      // Groups made, but a launcher could not join one (a delegation that allows mkdir, not the move):
      // limits then hold per process, as where no group can be made.
      await this.groups.close();
      this.groups = undefined;
      const again = await this.tryConfined(workspace);
      return again
        ? unavailable(again)
        : { mode: "on", ...perProcess(`a run could not join its control group (${failed})`) };
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }

  /** Runs `true` confined in `workspace`: null when it ran, otherwise why not. */
  private async tryConfined(workspace: string): Promise<string | null> {
    try {
      const owner = workspaceOwner(workspace);
      if (owner) adopt(workspace, owner);
      const prepared = this.confined(
        { workspace, executable: "/bin/sh", args: ["-c", "true"] },
        owner,
        null,
        MiB,
      );
      let finished: Awaited<Supervised["done"]>;
      let refused: string | undefined;
      try {
        const started = supervise({ ...prepared, inherit: [], timeoutMs: 10_000, killGraceMs: 0 });
        const admitted = admitOrStop(prepared, started);
        finished = await started.done;
        refused = await admitted;
      } finally {
        prepared.release();
        await prepared.group?.release();
      }
      if (refused) return refused;
      if (finished.reason === "exited" && finished.exitCode === 0) return null;
      const why = finished.spawnError ?? finished.stderr.trim().split("\n").slice(-1)[0] ?? finished.reason;
      return `a confined test program failed: ${why || `exit code ${finished.exitCode}`}`;
    } catch (error) {
      return `a confined test program could not start: ${(error as Error).message}`;
    }
  }
}

type GroupsScope = Omit<Extract<SandboxStatus, { mode: "on" }>, "mode">;

/** No run groups: limits per process, runs' CPU as heavy as the service's, for `why`. */
function perProcess(why: string): GroupsScope {
  return { limits: "process", limitsReason: why, cpu: "unweighted", cpuReason: why };
}

/** The workspace directory belongs to its sandbox uid, which must be able to write in it. */
function adopt(workspace: string, owner: Owner): void {
  const info = statSync(workspace);
  if (info.uid === owner.uid && info.gid === owner.gid) return;
  // Another workspace uid had it (two names once shared a hashed uid): its files come along. This runs
  // before any program of the workspace starts in this process (synchronously, so none starts meanwhile).
  if (isWorkspaceUid(info.uid)) chownTreeSync(workspace, owner);
  else chownSync(workspace, owner.uid, owner.gid);
}
