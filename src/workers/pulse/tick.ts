import { nowIso } from "../../shared/clock.ts";
import { requireRealm } from "../../shared/realm-refs.ts";
import { checkBudget } from "./context.ts";
import { acquireLease } from "./lease.ts";
import { executePulse, maxRunDurationMs, type RunDeps, type RunPlan } from "./run.ts";
import type { PulseScheduler } from "./scheduler.ts";
import type { PulseConfig, PulseRun, Skipped, SkipReason } from "./schema.ts";
import { getConfig, saveLastTick } from "./store.ts";

export interface TickDeps extends RunDeps {
  scheduler: PulseScheduler;
}

export interface TickInput {
  realmId: string;
  agentId: string;
  scheduled_time?: unknown;
}

const skip = (reason: SkipReason): Skipped => ({ skipped: true, reason });

/**
 * One cron tick of one agent's pulse. The gates, in order: the pulse still exists (a tick of a deleted
 * pulse stops its trigger), it is enabled, its realm is active, its budget allows, and no earlier run
 * of the agent is still going. Whatever happens is recorded as the agent's last tick.
 */
export async function tick(deps: TickDeps, input: TickInput): Promise<PulseRun | Skipped> {
  const { realmId, agentId } = input;
  const config = await getConfig(deps.state, realmId, agentId);
  if (!config) {
    // Nothing to record against: the pulse is gone. Its trigger goes too.
    await deps.scheduler.sync(realmId, agentId);
    return skip("not_registered");
  }
  const result = await gatedRun(deps, config);
  const scheduledTime = typeof input.scheduled_time === "string" ? input.scheduled_time : undefined;
  // Best effort: the tick's outcome matters more than its bookkeeping.
  await saveLastTick(deps.state, realmId, agentId, {
    at: nowIso(),
    ...("skipped" in result
      ? { outcome: "skipped", reason: result.reason }
      : { outcome: "ran", runId: result.id }),
    ...(scheduledTime ? { scheduledTime } : {}),
  }).catch(() => undefined);
  return result;
}

async function gatedRun(deps: TickDeps, config: PulseConfig): Promise<PulseRun | Skipped> {
  if (!config.enabled) return skip("disabled");
  const blocked = await realmBlock(deps, config.realmId);
  if (blocked) return skip(blocked);
  const budget = await checkBudget(deps.trigger, config);
  if (budget.allowed === false) return skip("budget_exceeded");
  const run = await runLeased(deps, {
    realmId: config.realmId,
    agentId: config.agentId,
    source: "cron",
    contextMode: config.contextMode,
    timeoutSecs: config.timeoutSecs,
    maxRetries: config.maxRetries,
    budget,
  });
  return run ?? skip("already_running");
}

/** A paused or archived realm sleeps. Fail-safe: when the realm cannot be read, the pulse goes ahead. */
async function realmBlock(deps: TickDeps, realmId: string): Promise<SkipReason | undefined> {
  const realm = await requireRealm(deps.trigger, realmId).catch(() => undefined);
  if (realm?.status === "Paused") return "realm_paused";
  if (realm?.status === "Archived") return "realm_archived";
  return undefined;
}

/**
 * Runs the pulse holding the agent's lease, so runs of one agent never overlap (on any node); null
 * when another run holds it. The lease outlives the run's longest possible duration only if the
 * process died, and is then taken over.
 */
export async function runLeased(deps: RunDeps, plan: RunPlan): Promise<PulseRun | null> {
  const lease = await acquireLease(deps.state, plan.realmId, plan.agentId, maxRunDurationMs(plan));
  if (!lease) return null;
  try {
    // Bookkeeping for crash recovery only: failing to note the run does not stop it.
    return await executePulse(deps, plan, (runKey) => lease.attach(runKey).catch(() => undefined));
  } finally {
    await lease.release().catch(() => undefined);
  }
}
