import { call } from "../../engine/call.ts";
import { report } from "../../engine/telemetry.ts";
import { systemPrincipal } from "../../engine/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { isAppError, isFunctionNotFound } from "../../shared/errors.ts";
import { requireRealm } from "../../shared/realm-refs.ts";
import type { RealmRunShare } from "../../shared/realm-share.ts";
import { checkBudget } from "./context.ts";
import { acquireLease } from "./lease.ts";
import { executePulse, maxRunDurationMs, type RunDeps, type RunPlan } from "./run.ts";
import type { PulseScheduler } from "./scheduler.ts";
import type { PulseConfig, PulseRun, Skipped, SkipReason } from "./schema.ts";
import { agentKey, CONFIGS_SCOPE, getConfig, getLastTick, SEEN_SCOPE, saveLastTick } from "./store.ts";
import { changeDigest } from "./wake.ts";

export interface TickDeps extends RunDeps {
  scheduler: PulseScheduler;
  /** Cron runs of each realm at once on this node. */
  realmShare: RealmRunShare;
  /** Tells every node (this one included) that the agent's pulse config changed. */
  publishChanged(realmId: string, agentId: string): Promise<void>;
}

export interface TickInput {
  realmId: string;
  agentId: string;
  scheduled_time?: unknown;
}

const skip = (reason: SkipReason): Skipped => ({ skipped: true, reason });

/**
 * One cron tick of one agent's pulse. The gates, in order: the pulse still exists (a tick of a deleted
 * pulse stops its trigger), its realm and its agent still exist (else the pulse is retired), it is
 * enabled, its realm is active, its budget allows, and no earlier run of the agent is still going.
 * Whatever happens is recorded as the agent's last tick.
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
  if ("skipped" in result && (await worthReporting(deps, config, result.reason))) {
    report(deps.trigger, { type: "pulse_run", agentId, realmId, outcome: "skipped", reason: result.reason });
  }
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

/**
 * A disabled pulse keeps ticking (its last tick says why the agent does not wake), but a log line and a
 * counted skip every tick would say nothing new: only the first tick after it was disabled is reported.
 */
async function worthReporting(deps: TickDeps, config: PulseConfig, reason: SkipReason): Promise<boolean> {
  if (reason !== "disabled") return true;
  const last = await getLastTick(deps.state, config.realmId, config.agentId).catch(() => null);
  return !(last?.outcome === "skipped" && last.reason === "disabled");
}

async function gatedRun(deps: TickDeps, config: PulseConfig): Promise<PulseRun | Skipped> {
  const realm = await readRealm(deps, config.realmId);
  if (realm === "deleted") return retire(deps, config, "realm_deleted");
  if (await agentDeleted(deps, config)) return retire(deps, config, "agent_deleted");
  if (!config.enabled) return skip("disabled");
  if (realm?.status === "Paused") return skip("realm_paused");
  if (realm?.status === "Archived") return skip("realm_archived");
  const budget = await checkBudget(deps.trigger, config);
  if (budget.allowed === false) return skip("budget_exceeded");
  const key = agentKey(config.realmId, config.agentId);
  const seen = config.wakeOn === "changes" ? await changeDigest(deps.trigger, config) : null;
  if (seen !== null && seen === (await deps.state.get<string>(SEEN_SCOPE, key))) return skip("no_changes");
  const run = await runLeased(
    deps,
    {
      realmId: config.realmId,
      agentId: config.agentId,
      source: "cron",
      contextMode: config.contextMode,
      contextGraph: config.contextGraph,
      timeoutSecs: config.timeoutSecs,
      maxRetries: config.maxRetries,
      budget,
    },
    deps.realmShare,
  );
  if (!run) return skip("already_running");
  if (run === "realm_busy") return skip(run);
  // Only a run that completed has seen this state: a failed one wakes again next tick.
  if (seen !== null && run.status === "Completed")
    await deps.state.set(SEEN_SCOPE, key, seen).catch(() => undefined);
  // The agent went away while it ran (agent::chat answered 404): no later tick should try again.
  if (run.status === "Failed" && (await agentDeleted(deps, config)))
    await retire(deps, config, "agent_deleted");
  return run;
}

/** A 404 of the function asked, not the function itself missing (a worker not running is no proof). */
const isNotFound = (error: unknown) =>
  isAppError(error) && error.code === "not_found" && !isFunctionNotFound(error);

/**
 * The realm, "deleted" when the realm worker answers 404, undefined when it cannot be read (or there is
 * no realm worker): fail-open, the pulse goes ahead.
 */
async function readRealm(
  deps: TickDeps,
  realmId: string,
): Promise<Awaited<ReturnType<typeof requireRealm>> | "deleted"> {
  try {
    return await requireRealm(deps.trigger, realmId);
  } catch (error) {
    return isNotFound(error) ? "deleted" : undefined;
  }
}

/**
 * True only when the agents worker answers that the agent does not exist (or now belongs to another
 * realm). Any other failure, or no agents worker, is not proof: the pulse goes ahead (fail-open).
 */
async function agentDeleted(deps: TickDeps, config: PulseConfig): Promise<boolean> {
  try {
    const agent = await call(deps.trigger, "agent::get", { id: config.agentId }, { auth: systemPrincipal });
    return agent?.realmId !== config.realmId;
  } catch (error) {
    return isNotFound(error);
  }
}

/**
 * A pulse whose realm or agent no longer exists stops for good: its config is deleted (its runs and
 * last tick stay, so status shows why), its trigger stops here and, through pulse.changed, on every node.
 */
async function retire(deps: TickDeps, config: PulseConfig, reason: SkipReason): Promise<Skipped> {
  const { realmId, agentId } = config;
  await deps.state.delete(CONFIGS_SCOPE, agentKey(realmId, agentId));
  await deps.scheduler.sync(realmId, agentId);
  await deps.publishChanged(realmId, agentId);
  return skip(reason);
}

/**
 * Runs the pulse holding the agent's lease, so runs of one agent never overlap (on any node); null
 * when another run holds it. The lease is released only once the run has ended: every attempt either
 * answered or was aborted by its timeout. It outlives the run's longest possible duration only if the
 * process died, and is then taken over. With a share (cron runs), the run also needs one of its realm's
 * places, taken once the agent's own lease is held: "realm_busy" when there is none.
 */
export async function runLeased(
  deps: RunDeps,
  plan: RunPlan,
  share?: RealmRunShare,
): Promise<PulseRun | "realm_busy" | null> {
  const lease = await acquireLease(deps.state, plan.realmId, plan.agentId, maxRunDurationMs(plan));
  if (!lease) return null;
  if (share && !share.tryEnter(plan.realmId)) {
    await lease.release().catch(() => undefined);
    return "realm_busy";
  }
  try {
    // Bookkeeping for crash recovery only: failing to note the run does not stop it.
    return await executePulse(deps, plan, (runKey) => lease.attach(runKey).catch(() => undefined));
  } finally {
    share?.leave(plan.realmId);
    await lease.release().catch(() => undefined);
  }
}
