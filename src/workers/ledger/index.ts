import type { WorkerClient } from "../../engine/worker-client.ts";

/** Placeholder until the ledger worker lands (issue 6). */
export function registerLedger(_worker: WorkerClient): { ready?: Promise<void> } {
  return {};
}
