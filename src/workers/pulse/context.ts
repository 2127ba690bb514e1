import { call } from "../../engine/call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { MAX_TURN_CONTEXT_BYTES } from "../../shared/limits.ts";
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
  withGraph = false,
): Promise<PulseContext> {
  const { realmId, agentId } = target;
  if (mode === "Thin") return { agentId, realmId, mode: "thin" };
  const options = { timeout_ms: CONTEXT_READ_TIMEOUT_MS };
  const [missions, budgetNow, chain, directives] = await Promise.all([
    read(
      call(trigger, "mission::list", { realmId, assigneeId: agentId, status: "active" }, options),
      (answer) => answer.missions,
    ),
    budget === undefined ? checkBudget(trigger, target) : budget,
    read(call(trigger, "hierarchy::chain", { realmId, agentId }, options), (answer) => answer.chain),
    // Directive statuses are capitalised (Active, Paused, ...); the lowercase filter of the earlier
    // implementation matched none of them.
    read(
      call(trigger, "directive::list", { realmId, status: "Active" }, options),
      (answer) => answer.directives,
    ),
  ]);
  const full = { agentId, realmId, mode: "full", missions, budget: budgetNow, chain, directives };
  return fitted(withGraph ? { ...full, graph: await missionGraph(trigger, agentId, missions) } : full);
}

/** The lists a Full context may lose entries of to fit, the first the most readily. */
const CUT_FIRST = ["graph", "directives", "chain", "missions"] as const;
/** Left free for the note of what was left out. */
const NOTE_BYTES = 256;

/**
 * agent::chat takes at most MAX_TURN_CONTEXT_BYTES of context (as JSON): a realm whose active
 * directives or missions added up to more (seven directives with the longest description allowed do)
 * failed every Full pulse of every agent, at each tick, before the model was called. So the lists lose
 * entries from their ends until the context fits, the graph's first, then the directives', the chain's
 * and the missions', and `omitted` tells the agent (and the run's snapshot) how many of each.
 */
function fitted(context: PulseContext): PulseContext {
  const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? "");
  let total = size(context);
  if (total <= MAX_TURN_CONTEXT_BYTES) return context;
  const cut: PulseContext = { ...context };
  const omitted: Record<string, number> = {};
  for (const field of CUT_FIRST) {
    const list = cut[field];
    if (!Array.isArray(list) || total <= MAX_TURN_CONTEXT_BYTES - NOTE_BYTES) continue;
    const kept = [...list];
    while (kept.length > 0 && total > MAX_TURN_CONTEXT_BYTES - NOTE_BYTES) {
      // The entry and the comma before it (none before the first).
      total -= size(kept.pop()) + (kept.length > 0 ? 1 : 0);
      omitted[field] = (omitted[field] ?? 0) + 1;
    }
    cut[field] = kept;
  }
  return { ...cut, omitted };
}

/** Most graph versions a context carries: enough to orient the agent, small enough for a prompt. */
const GRAPH_LIMIT = 50;

/**
 * The agent's own knowledge graph around its active missions: the entities named by each mission's id
 * or title, with what they relate to (depth 1), current versions only. Fail-safe like every read.
 */
async function missionGraph(
  trigger: TriggerFn,
  agentId: string,
  missions: Array<{ id: string; title: string }>,
): Promise<unknown[]> {
  const names = [
    ...new Set(
      missions
        .slice(0, 10)
        .flatMap((m) => [m.id, m.title])
        .filter((n) => typeof n === "string"),
    ),
  ];
  const found = await Promise.all(
    names.map((entity) =>
      call(
        trigger,
        "kg::query_temporal",
        { agentId, entity, depth: 1 },
        { timeout_ms: CONTEXT_READ_TIMEOUT_MS },
      ).catch(() => []),
    ),
  );
  const seen = new Set<string>();
  const versions: unknown[] = [];
  for (const version of found.flat()) {
    const key = `${version.entity}@${version.version}`;
    if (seen.has(key)) continue;
    seen.add(key);
    versions.push(version);
  }
  return versions.slice(0, GRAPH_LIMIT);
}

/** One array of a function's answer, or [] when the call fails (or times out) or the answer has none. */
async function read<T, V>(answer: Promise<T>, items: (answer: T) => V[]): Promise<V[]> {
  try {
    const value = items(await answer);
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
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
    const answer = await call(
      trigger,
      "ledger::check",
      { realmId: target.realmId, agentId: target.agentId },
      { timeout_ms: CONTEXT_READ_TIMEOUT_MS },
    );
    return answer && typeof answer === "object" ? answer : { allowed: true };
  } catch {
    return { allowed: true };
  }
}
