import { totalmem } from "node:os";
import { z } from "zod";

const MiB = 1024 * 1024;
const count = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** The sandbox's variables, checked at start with the rest of the configuration. */
export const sandboxEnvSchema = z.object({
  /** `off` runs agents' programs unconfined: an explicit, loudly logged opt-out. */
  AGENTOS_SANDBOX: z.enum(["on", "off"]).default("on"),
  /** `off` keeps memory and process limits per process (a run starts about an RCU grace period sooner). */
  AGENTOS_SANDBOX_RUN_GROUPS: z.enum(["on", "off"]).default("on"),
  AGENTOS_SANDBOX_MEMORY_MB: count(64, 1024 * 1024, 2048),
  /** Unset: half of this machine's memory. */
  AGENTOS_SANDBOX_TOTAL_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(64)
    .max(1024 * 1024 * 1024)
    .optional(),
  AGENTOS_SANDBOX_CPU_SECONDS: count(1, 86_400, 600),
  /** All runs together weigh this percentage of the service's own CPU weight (where groups have a cpu controller). */
  AGENTOS_SANDBOX_CPU_WEIGHT: count(1, 100, 25),
  /** Unset: no ceiling. At most this many cores' worth of CPU for all runs together, e.g. 1.5. */
  AGENTOS_SANDBOX_CPU_CORES: z.coerce
    .number()
    .min(0.01, "AGENTOS_SANDBOX_CPU_CORES must be at least 0.01 (cores, e.g. 1.5)")
    .max(4096)
    .optional(),
  AGENTOS_SANDBOX_PROCESSES: count(8, 100_000, 512),
  AGENTOS_SANDBOX_FILE_MB: count(1, 1024 * 1024, 1024),
  AGENTOS_SANDBOX_OPEN_FILES: count(64, 1_048_576, 4096),
  AGENTOS_SANDBOX_TMP_MB: count(1, 1024 * 1024, 512),
  AGENTOS_WORKSPACE_QUOTA_MB: count(1, 1024 * 1024 * 1024, 2048),
  AGENTOS_SANDBOX_DISK_RESERVE_MB: count(0, 1024 * 1024 * 1024, 512),
});

export interface SandboxLimits {
  /**
   * Memory of a run: all its processes together where control groups are available (and private
   * writable memory of each process, RLIMIT_DATA, everywhere).
   */
  memoryBytes: number;
  /** Memory of all runs of the service together (where control groups are available). */
  totalMemoryBytes: number;
  /** CPU seconds of each process (RLIMIT_CPU). */
  cpuSeconds: number;
  /**
   * All runs together, in one control group, weigh this percentage of the service (cgroup v1
   * `cpu.shares` of 1024 × it / 100, v2 `cpu.weight` of it): busy runs cannot starve the service.
   */
  cpuWeightPercent: number;
  /** The most CPU all runs together may use, in cores (null: no ceiling beyond the weight). */
  cpuCores: number | null;
  /** Processes and threads of the workspace's uid at once (RLIMIT_NPROC). */
  processes: number;
  /** Largest file a program may write (RLIMIT_FSIZE), further capped by what the quota leaves. */
  fileBytes: number;
  openFiles: number;
  /** Size of the sandbox's private /tmp (memory-backed). */
  tmpBytes: number;
  /** Everything a workspace may hold. */
  workspaceQuotaBytes: number;
  /**
   * Free space the disk holding the workspaces keeps: programs running while it has less are stopped
   * (deleted files a program keeps open take space no walk of its workspace finds; 0: no reserve).
   */
  diskReserveBytes: number;
}

export interface SandboxSettings {
  enabled: boolean;
  /** A control group per run, where the host gives them. */
  runGroups: boolean;
  limits: SandboxLimits;
}

export function sandboxSettings(env: NodeJS.ProcessEnv): SandboxSettings {
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value?.trim()));
  const parsed = sandboxEnvSchema.parse(given);
  return {
    enabled: parsed.AGENTOS_SANDBOX === "on",
    runGroups: parsed.AGENTOS_SANDBOX_RUN_GROUPS === "on",
    limits: {
      memoryBytes: parsed.AGENTOS_SANDBOX_MEMORY_MB * MiB,
      totalMemoryBytes: (parsed.AGENTOS_SANDBOX_TOTAL_MEMORY_MB ?? Math.floor(totalmem() / 2 / MiB)) * MiB,
      cpuSeconds: parsed.AGENTOS_SANDBOX_CPU_SECONDS,
      cpuWeightPercent: parsed.AGENTOS_SANDBOX_CPU_WEIGHT,
      cpuCores: parsed.AGENTOS_SANDBOX_CPU_CORES ?? null,
      processes: parsed.AGENTOS_SANDBOX_PROCESSES,
      fileBytes: parsed.AGENTOS_SANDBOX_FILE_MB * MiB,
      openFiles: parsed.AGENTOS_SANDBOX_OPEN_FILES,
      tmpBytes: parsed.AGENTOS_SANDBOX_TMP_MB * MiB,
      workspaceQuotaBytes: parsed.AGENTOS_WORKSPACE_QUOTA_MB * MiB,
      diskReserveBytes: parsed.AGENTOS_SANDBOX_DISK_RESERVE_MB * MiB,
    },
  };
}
