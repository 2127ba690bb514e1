import type { WorkerClient } from "../../engine/worker-client.ts";

/** Placeholder until the realm worker lands (issue 6). */
export function registerRealm(_worker: WorkerClient): { ready?: Promise<void> } {
  return {};
}
