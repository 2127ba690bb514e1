/**
 * When the embedding queue tries an agent again after a failure (provider down, 5xx, timeout): 1 s
 * after the first, doubling up to 60 s, each delay jittered to between half and all of it so agents that
 * failed together do not retry together. `random` in [0, 1).
 */
export const FIRST_RETRY_MS = 1000;
export const MAX_RETRY_MS = 60_000;

export function retryDelayMs(failures: number, random: number): number {
  const full = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, failures - 1));
  return Math.round(full * (0.5 + 0.5 * random));
}

/**
 * After a refusal (the realm's or the agent's budget spent, the realm paused): nothing is asked of the
 * provider, nor of the ledger, for at least 60 s (up to 90 s, jittered), unless the agent stores again.
 */
export function refusalDelayMs(random: number): number {
  return Math.round(MAX_RETRY_MS * (1 + 0.5 * random));
}

/** Whether an embedding failure is a refusal to spend (budget, realm not open) rather than a fault. */
export function isRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "budget_exceeded" || code === "conflict";
}
