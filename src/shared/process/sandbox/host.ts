import { findExecutable, SAFE_PATH } from "../supervise.ts";
import { runsAsRoot } from "./owner.ts";

export type SandboxStatus =
  | {
      mode: "on";
      /** Whether memory and process limits hold for a run's processes together or only for each of them. */
      limits: "run" | "process";
      /** Why limits hold per process only. */
      limitsReason?: string;
      /** Whether all runs together weigh less than the service on the CPU (AGENTOS_SANDBOX_CPU_WEIGHT). */
      cpu: "weighted" | "unweighted";
      /** Why runs' CPU is not weighted (each run then weighs as much as the service). */
      cpuReason?: string;
    }
  | { mode: "off" }
  | { mode: "unavailable"; reason: string };

const REMEDY =
  "install bubblewrap (`apt-get install -y bubblewrap`; `npm install` does it when run as root) and allow unprivileged user namespaces (`sysctl -w kernel.unprivileged_userns_clone=1`; on Ubuntu 24.04 and later `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; in a container, one that permits user namespaces), then restart. AGENTOS_SANDBOX=off runs agents' programs unconfined (not recommended: any agent can then read the service's secrets)";

export function unavailable(why: string): SandboxStatus {
  return { mode: "unavailable", reason: `${why}; ${REMEDY}` };
}

/**
 * The host's programs a sandbox is made with: bubblewrap, and util-linux's prlimit and setpriv; choom
 * (util-linux 2.33 and later) too where present.
 */
export class HostPrograms {
  readonly bwrap: string | null;
  readonly prlimit: string | null;
  readonly setpriv: string | null;
  /** Where missing, confined processes keep the service's OOM score. */
  readonly choom: string | null;
  /** AGENTOS_SANDBOX_BWRAP: bubblewrap somewhere other than the system's directories. */
  private readonly bwrapSetting: string | undefined;

  constructor(env: NodeJS.ProcessEnv) {
    this.bwrapSetting = env.AGENTOS_SANDBOX_BWRAP?.trim() || undefined;
    this.bwrap = this.bwrapSetting ? findExecutable(this.bwrapSetting) : findExecutable("bwrap", SAFE_PATH);
    this.prlimit = findExecutable("prlimit", SAFE_PATH);
    this.setpriv = findExecutable("setpriv", SAFE_PATH);
    this.choom = findExecutable("choom", SAFE_PATH);
  }

  /** Why no sandbox can be made here, or null when everything it needs is present. */
  missing(): SandboxStatus | null {
    if (process.platform !== "linux") return unavailable(`it needs Linux, this is ${process.platform}`);
    if (!this.bwrap) {
      return unavailable(
        this.bwrapSetting
          ? `AGENTOS_SANDBOX_BWRAP=${this.bwrapSetting} is not an executable`
          : "bubblewrap (bwrap) is not installed",
      );
    }
    if (!this.prlimit) return unavailable("prlimit (util-linux) is not installed");
    if (!this.setpriv && runsAsRoot()) return unavailable("setpriv (util-linux) is not installed");
    return null;
  }
}
