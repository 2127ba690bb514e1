import type { TriggerFn } from "../../engine/types.ts";
import type { ContextMode } from "./schema.ts";

export type PulseContext = Record<string, unknown>;

/**
 * Each context read (and the budget check) gets this long before it counts as failed and falls back, so
 * a hung worker cannot stretch a run past the lease computed for it (run.ts OVERHEAD_MS covers it).
 */
export const CONTEXT_READ_TIMEOUT_MS = 10_000;

/**
 * What the agent is told when it wakes. Thin names the agent and realm only; Full adds its active
 * missions, its budget, its chain of command and the realm's active directives. Each of the four
 * reads is independent (made in parallel) and fail-safe: a missing or failing worker contributes its
 * empty (or allowed) value instead of stopping the pulse, and each is bounded by
 * CONTEXT_READ_TIMEOUT_MS (a read that takes longer falls back too). `budget`, when given, is the ledger answer
 * the caller already has (a tick asks before running), so the ledger is not asked twice.
 */
export async function buildContext(
  trigger: TriggerFn,
  target: { realmId: string; agentId: string },
  mode: ContextMode,
  budget?: unknown,
): Promise<PulseContext> {
  const { realmId, agentId } = target;
  if (mode === "Thin") return { agentId, realmId, mode: "thin" };
  const [missions, budgetNow, chain, directives] = await Promise.all([
    read(trigger, "mission::list", { realmId, assigneeId: agentId, status: "active" }, "missions", []),
    budget === undefined ? checkBudget(trigger, target) : budget,
    read(trigger, "hierarchy::chain", { realmId, agentId }, "chain", []),
    // Directive statuses are capitalised (Active, Paused, ...); the lowercase filter of the earlier
    // implementation matched none of them.
    read(trigger, "directive::list", { realmId, status: "Active" }, "directives", []),
  ]);
  return { agentId, realmId, mode: "full", missions, budget: budgetNow, chain, directives };
}

/** One array field of a function's answer, or the fallback when the call fails or the field is absent. */
async function read(
  trigger: TriggerFn,
  function_id: string,
  payload: Record<string, unknown>,
  field: string,
  fallback: unknown[],
): Promise<unknown> {
  try {
    const answer = (await trigger({ function_id, payload, timeout_ms: CONTEXT_READ_TIMEOUT_MS })) as Record<
      string,
      unknown
    > | null;
    const value = answer?.[field];
    return Array.isArray(value) ? value : fallback;
  } catch {
    return fallback;
  }
}

/**
 * The ledger's whole check result; a missing, failing or slow (CONTEXT_READ_TIMEOUT_MS) ledger allows
 * (fail-safe rule).
 */
export async function checkBudget(
  trigger: TriggerFn,
  target: { realmId: string; agentId: string },
): Promise<Record<string, unknown>> {
  try {
    const answer = await trigger({
      function_id: "ledger::check",
      payload: { realmId: target.realmId, agentId: target.agentId },
      timeout_ms: CONTEXT_READ_TIMEOUT_MS,
    });
    return answer && typeof answer === "object" ? (answer as Record<string, unknown>) : { allowed: true };
  } catch {
    return { allowed: true };
  }
}
