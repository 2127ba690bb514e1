import type { WorkerClient } from "../../engine/worker-client.ts";

/** Placeholder until the pulse worker lands (issue 6). */
export function registerPulse(_worker: WorkerClient): { ready?: Promise<void> } {
  return {};
}
