import { readdirSync, readFileSync } from "node:fs";

/** Live processes whose environment holds `name=value` (Linux /proc), e.g. a bridge run's marker. */
export function processesWithEnv(name: string, value: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc").filter((item) => /^\d+$/.test(item))) {
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      const status = readFileSync(`/proc/${entry}/stat`, "utf8");
      // A zombie has exited already: it is only waiting for its parent to read its status.
      if (status.split(") ")[1]?.startsWith("Z")) continue;
      if (environ.includes(`${name}=${value}`)) found.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** Processes whose command line carries `marker` (Linux /proc). */
export function processesCarrying(marker: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}
