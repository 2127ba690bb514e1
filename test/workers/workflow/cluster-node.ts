import type { RealmRunShare } from "../../../src/shared/realm-share.ts";
import { createDrain } from "../../../src/workers/workflow/drain.ts";
import type { FunctionInfo } from "../../../src/workers/workflow/function-info.ts";
import { createLeases } from "../../../src/workers/workflow/lease.ts";
import type { RunControl } from "../../../src/workers/workflow/runs.ts";
import { saveOwnedRun } from "../../../src/workers/workflow/store.ts";
import type { createStateEngine } from "../../helpers/engine.ts";

/**
 * A cluster node on a shared state engine: its leases (on a monotonic clock the test moves) and its run
 * control, wired as registerWorkflow wires them (checkpoints on the lease, stops between steps on drain).
 */
export function clusterNode(
  { engine, state }: ReturnType<typeof createStateEngine>,
  leaseMs: number,
  monotonic: () => number = () => 0,
) {
  const leases = createLeases(leaseMs, monotonic);
  const events: string[] = [];
  const drain = createDrain();
  const control: RunControl = {
    deps: {
      trigger: (request) => engine.trigger(request),
      checkpoint: (run) => saveOwnedRun(state, run, leaseMs),
      publish: (event) => events.push(event),
      retryDelayMs: () => 0,
      inputFields: async () => undefined,
      handingOver: () => drain.active,
    },
    state,
    trigger: (request) => engine.trigger(request),
    leases,
    local: new Map(),
    asyncRuns: undefined as unknown as RealmRunShare,
    authorize: async () => undefined,
    functionInfo: undefined as unknown as FunctionInfo,
    maxDepth: 5,
    drain,
  };
  return { leases, control, events };
}
