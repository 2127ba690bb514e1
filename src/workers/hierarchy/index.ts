import type { WorkerClient } from "../../engine/worker-client.ts";

/** Placeholder until the hierarchy worker lands (issue 6). */
export function registerHierarchy(_worker: WorkerClient): { ready?: Promise<void> } {
  return {};
}
