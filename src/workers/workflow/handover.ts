import { casUpdate } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { nowMs } from "../../shared/clock.ts";
import type { Leases } from "./lease.ts";
import type { RunControl } from "./runs.ts";
import type { Run } from "./schema.ts";
import { RUNS_SCOPE, type StoredRun } from "./store.ts";

/** Releases at once (each a read and a compare-and-swap). */
const RELEASES_IN_PARALLEL = 8;

/**
 * A clean shutdown: no run here starts another step; the steps in flight get until `until` (this
 * process's clock) to finish and be checkpointed. Cluster mode: each run that stopped so is released in
 * its record, so another node (or this one restarted) takes it over at once instead of after a lapsed
 * lease. A run whose step is still in flight when the wait ends is not released: that step's outcome is
 * unknown, so the run keeps its lease and is taken over only once it lapses, as if the node had died.
 * Embedded mode: runs stop between steps and the restart resumes them, as every running run.
 */
export async function handOver(
  control: RunControl,
  until: number,
): Promise<{ released: number; inFlight: number }> {
  const { drain, leases } = control;
  drain.active = true;
  const inFlight = await settled(control, until);
  const parked = [...drain.parked.values()];
  drain.parked.clear();
  if (!leases) return { released: 0, inFlight };
  let released = 0;
  for (let start = 0; start < parked.length; start += RELEASES_IN_PARALLEL) {
    const chunk = parked.slice(start, start + RELEASES_IN_PARALLEL);
    const outcomes = await Promise.all(chunk.map((run) => release(control.state, leases, run)));
    released += outcomes.filter(Boolean).length;
  }
  return { released, inFlight };
}

/**
 * Waits until no run executes here any more, or `until`; how many still do then. A run waiting to
 * resume (for its functions) has no step going: it is not waited for, nor released.
 */
async function settled(control: RunControl, until: number): Promise<number> {
  for (;;) {
    const going = [...control.local.values()].flatMap((entry) => (entry.done ? [entry.done] : []));
    const left = until - nowMs();
    if (going.length === 0 || left <= 0) return going.length;
    let timer: NodeJS.Timeout | undefined;
    const timeUp = new Promise((resolve) => {
      timer = setTimeout(resolve, left);
    });
    await Promise.race([Promise.allSettled(going), timeUp]);
    clearTimeout(timer);
  }
}

/**
 * Lets the run go, only while its record still names this node and stands where this node stopped it:
 * a run taken over, cancelled or finished meanwhile is left as it is. Without an owner, this node's
 * later writes of it (a renewal, a checkpoint) are refused, and any node's cancel ends it at once.
 */
async function release(state: StateClient, leases: Leases, run: Run): Promise<boolean> {
  const written = await casUpdate<StoredRun>(state, RUNS_SCOPE, run.runId, ({ value }) => {
    if (value?.status !== "running" || value.owner !== leases.nodeId || value.position !== run.position) {
      return undefined;
    }
    const { owner: _owner, ...rest } = value;
    return { ...rest, released: true };
  }).catch(() => undefined);
  return written?.changed === true;
}
