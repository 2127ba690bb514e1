import type { WorkerClient } from "../../engine/worker-client.ts";

/** Placeholder until the directive worker lands (issue 6). */
export function registerDirective(_worker: WorkerClient): { ready?: Promise<void> } {
  return {};
}
