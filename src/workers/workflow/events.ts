import type { StateClient } from "../../engine/state/client.ts";
import { loadRun } from "./store.ts";

const POLL_MS = 250;
/** A comment line now and then keeps proxies from closing a quiet stream. */
const KEEPALIVE_EVERY = Math.round(15_000 / POLL_MS);

/**
 * A run's progress as server-sent events, read from its stored checkpoints (so it works whichever node
 * executes the run, and after a restart): `status` first and on every change, `step` for each completed
 * step result (with its index), and a last event named after the final status (`completed`, `failed`,
 * `cancelled`, `interrupted`) carrying the run, after which the stream ends.
 */
export async function* runEvents(state: StateClient, runId: string): AsyncGenerator<string> {
  let sent = 0;
  let status = "";
  for (let tick = 0; ; tick++) {
    const run = await loadRun(state, runId);
    if (!run) {
      yield sse("error", { runId, message: `Run ${runId} no longer exists` });
      return;
    }
    if (run.status !== status) {
      status = run.status;
      yield sse("status", { runId, status, position: run.position });
    }
    for (; sent < run.results.length; sent++) yield sse("step", { runId, index: sent, ...run.results[sent] });
    if (run.status !== "running") {
      yield sse(run.status, run);
      return;
    }
    if (tick > 0 && tick % KEEPALIVE_EVERY === 0) yield ": keep-alive\n\n";
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
