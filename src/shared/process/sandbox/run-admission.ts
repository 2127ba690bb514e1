import { statSync } from "node:fs";
import type { Supervised } from "../supervise.ts";
import type { RunGroup } from "./cgroups.ts";
import { deletedOpenBytes } from "./held-files.ts";
import type { WatchLimits } from "./quota.ts";

const MiB = 1024 * 1024;

/**
 * A run with a control group of its own (see cgroups.ts): how its processes are admitted to the group
 * before the program starts, what its end reports, and what it holds of the disk.
 */

/**
 * The gate a confined launch waits on (bubblewrap's block descriptor) and the admission that opens it:
 * the spawned process and what it started moved into the run's group first. Never opened when the group
 * cannot be joined, so the program never starts outside it.
 */
export function admission(group: RunGroup): {
  opened: Promise<void>;
  admit: (pid: number | null) => Promise<void>;
} {
  const { promise: opened, resolve: open } = Promise.withResolvers<void>();
  // Opened only once admitted. A gate closed unopened would read as end-of-file, and bubblewrap would
  // start the program: one that cannot be admitted is killed waiting on it (admitOrStop).
  const admit = async (pid: number | null) => {
    if (pid === null) return;
    await group.admit(pid);
    open();
  };
  return { opened, admit };
}

/** Admits a started launch into its group; stops it when that fails, and says why (undefined: admitted). */
export async function admitOrStop(
  prepared: { admit?: (pid: number | null) => Promise<void> },
  started: Supervised,
): Promise<string | undefined> {
  try {
    await prepared.admit?.(started.pid);
    return undefined;
  } catch (error) {
    started.cancel();
    return `the run was stopped: it could not join its control group (${(error as Error).message})`;
  }
}

/** What the run's processes hold of the workspace's disk in deleted files (when its group knows them). */
export function heldBy(group: RunGroup | undefined, workspace: string): Pick<WatchLimits, "held"> {
  if (!group) return {};
  const device = statSync(workspace).dev;
  return { held: () => deletedOpenBytes(group.pids(), device) };
}

/** `done` once the run's group is removed, saying so when the kernel ended processes for the run's memory. */
export async function releasedAfter<F extends Awaited<Supervised["done"]>>(
  done: Promise<F>,
  group: RunGroup,
  admitted: Promise<string | undefined>,
  memoryBytes: number,
): Promise<F> {
  const finished = await done;
  const refused = await admitted;
  const killed = await group.release();
  if (refused) return { ...finished, stderr: `${finished.stderr}\n${refused}` };
  if (killed === 0) return finished;
  const note = `the run reached its memory limit (${memoryBytes / MiB} MiB, AGENTOS_SANDBOX_MEMORY_MB): the kernel ended ${killed} of its processes`;
  return { ...finished, stderr: finished.stderr ? `${finished.stderr}\n${note}` : note };
}
