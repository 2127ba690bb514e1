import { Cron } from "croner";
import { casUpdate } from "../../engine/state/cas.ts";
import type { InvocationContext } from "../../engine/types.ts";
import { assertRealmAccess, requireAdmin } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { conflict, notFound } from "../../shared/errors.ts";
import { recheckAgentRef, recheckRealm, requireAgentInRealm, requireRealm } from "../../shared/realm-refs.ts";
import type { ContextMode, LastTick, PulseConfig, PulseRun, RegisterInput } from "./schema.ts";
import {
  agentKey,
  CONFIGS_SCOPE,
  configKeys,
  deleteAll,
  getConfig,
  getLastTick,
  LAST_TICKS_SCOPE,
  LEASES_SCOPE,
  realmPrefix,
  recentRuns,
  runsScope,
  SEEN_SCOPE,
  SEQUENCES_SCOPE,
  splitAgentKey,
} from "./store.ts";
import { runLeased, type TickDeps } from "./tick.ts";

export type PulseDeps = TickDeps;

type Target = { realmId: string; agentId: string };

const noPulse = ({ realmId, agentId }: Target) =>
  notFound(`No pulse registered for agent ${agentId} in realm ${realmId}`);

/**
 * Registers (or re-registers) an agent's pulse. The new trigger is created first, so an expression the
 * scheduler refuses fails the call before anything is stored; the agent's previous trigger is replaced,
 * never added to. Re-registering replaces the whole config (omitted options are cleared) and enables
 * the pulse again; createdAt is kept.
 */
export async function register(deps: PulseDeps, input: RegisterInput, ctx: InvocationContext) {
  const { realmId, agentId } = input;
  assertRealmAccess(ctx, realmId);
  await requireRealm(deps.trigger, realmId, { write: true });
  const known = await requireAgentInRealm(deps.trigger, agentId, realmId);
  const config = await deps.scheduler.exclusive(realmId, agentId, async () => {
    const entry = deps.scheduler.create(realmId, agentId, input.cron);
    try {
      const stored = await casUpdate<PulseConfig>(
        deps.state,
        CONFIGS_SCOPE,
        agentKey(realmId, agentId),
        ({ value }) => configOf(input, value),
      );
      deps.scheduler.install(realmId, agentId, entry);
      return stored.value as PulseConfig;
    } catch (error) {
      entry.unregister();
      throw error;
    }
  });
  // A realm or agent delete that began meanwhile may have purged its pulses already: this one goes too.
  await recheckRealm(deps.trigger, realmId, () => forgetPulse(deps, input));
  await recheckAgentRef(deps.trigger, agentId, realmId, known, () => forgetPulse(deps, input));
  await deps.publishChanged(realmId, agentId);
  return config;
}

function configOf(input: RegisterInput, previous: PulseConfig | null): PulseConfig {
  const now = nowIso();
  return {
    agentId: input.agentId,
    realmId: input.realmId,
    cron: input.cron,
    enabled: true,
    contextMode: input.contextMode,
    contextGraph: input.contextGraph,
    wakeOn: input.wakeOn,
    ...(input.timeoutSecs !== undefined ? { timeoutSecs: input.timeoutSecs } : {}),
    ...(input.maxRetries !== undefined ? { maxRetries: input.maxRetries } : {}),
    createdAt: previous?.createdAt ?? now,
    updatedAt: now,
  };
}

/** Enables or disables a pulse; compare-and-swap, so a concurrent register or toggle is never lost. */
export async function toggle(deps: PulseDeps, input: Target & { enabled: boolean }, ctx: InvocationContext) {
  const { realmId, agentId, enabled } = input;
  assertRealmAccess(ctx, realmId);
  await requireRealm(deps.trigger, realmId, { write: true });
  const stored = await casUpdate<PulseConfig>(
    deps.state,
    CONFIGS_SCOPE,
    agentKey(realmId, agentId),
    ({ value }) => {
      if (!value) throw noPulse(input);
      return value.enabled === enabled ? undefined : { ...value, enabled, updatedAt: nowIso() };
    },
  );
  if (stored.changed) await deps.publishChanged(realmId, agentId);
  return stored.value as PulseConfig;
}

/**
 * Wakes the agent now (source manual), with the stored pulse's context mode, timeout and retries when
 * one is registered (enabled or not: an explicit invoke is the operator's call). A paused realm's agents
 * sleep, and an agent already in a pulse run is not woken twice (409).
 */
export async function invoke(
  deps: PulseDeps,
  input: Target & { contextMode?: ContextMode },
  ctx: InvocationContext,
): Promise<PulseRun> {
  const { realmId, agentId } = input;
  assertRealmAccess(ctx, realmId);
  const realm = await requireRealm(deps.trigger, realmId, { write: true });
  if (realm?.status === "Paused")
    throw conflict(`Realm ${realmId} is paused; resume it to invoke its agents`);
  await requireAgentInRealm(deps.trigger, agentId, realmId);
  const config = await getConfig(deps.state, realmId, agentId);
  const run = await runLeased(deps, {
    realmId,
    agentId,
    source: "manual",
    contextMode: input.contextMode ?? config?.contextMode ?? "Thin",
    contextGraph: config?.contextGraph,
    timeoutSecs: config?.timeoutSecs,
    maxRetries: config?.maxRetries,
  });
  if (!run) throw conflict(`A pulse run of agent ${agentId} is already running`);
  // No share was asked for: a manual run is an HTTP request, held to its realm's requests in flight.
  if (run === "realm_busy") throw conflict(`Realm ${realmId} has too many pulse runs going`);
  return run;
}

export async function status(
  deps: PulseDeps,
  input: Target & { limit: number },
  ctx: InvocationContext,
): Promise<{
  config: PulseConfig | null;
  recentRuns: PulseRun[];
  lastTick: LastTick | null;
  nextFireAt: string | null;
}> {
  const { realmId, agentId } = input;
  assertRealmAccess(ctx, realmId);
  const [config, runs, lastTick] = await Promise.all([
    getConfig(deps.state, realmId, agentId),
    recentRuns(deps.state, realmId, agentId, input.limit),
    getLastTick(deps.state, realmId, agentId),
  ]);
  if (!config && runs.length === 0) throw noPulse(input);
  return {
    config: config ?? null,
    recentRuns: runs,
    lastTick: lastTick ?? null,
    nextFireAt: nextFire(config),
  };
}

/** When the pulse fires next (UTC, as the cron trigger runs it): null when disabled or never again. */
function nextFire(config: PulseConfig | undefined | null): string | null {
  if (!config?.enabled) return null;
  try {
    return new Cron(config.cron, { paused: true, timezone: "UTC" }).nextRun()?.toISOString() ?? null;
  } catch {
    return null;
  }
}

/**
 * An agent's part of an agent delete: its pulse stops on every node and its records go. Safe to repeat.
 * Internal cascade: only the system (the agent delete calls it so) or an admin key may call it.
 */
export async function purgeAgent(deps: PulseDeps, target: Target, ctx: InvocationContext) {
  requireAdmin(ctx);
  return { purged: await forgetPulse(deps, target) };
}

/** The agent's pulse stopped and every record of it deleted; true when it had a config. */
async function forgetPulse(deps: PulseDeps, target: Target): Promise<boolean> {
  const { realmId, agentId } = target;
  const key = agentKey(realmId, agentId);
  const existed = (await deps.state.delete(CONFIGS_SCOPE, key)) !== null;
  await deps.scheduler.sync(realmId, agentId);
  for (const scope of [LAST_TICKS_SCOPE, SEQUENCES_SCOPE, LEASES_SCOPE, SEEN_SCOPE])
    await deps.state.delete(scope, key);
  await deleteAll(deps.state, runsScope(realmId), `${agentId}/`);
  await deps.publishChanged(realmId, agentId);
  return existed;
}

/**
 * A realm's part of a realm delete: its pulses stop on every node and all their records go. Safe to
 * repeat. Configs go first, so a tick racing the purge finds no pulse and stops its own trigger.
 * Internal cascade: only the system (the realm delete calls it so) or an admin key may call it.
 */
export async function purgeRealm(deps: PulseDeps, realmId: string, ctx: InvocationContext) {
  requireAdmin(ctx);
  const targets = new Map<string, Target>();
  for (const key of await configKeys(deps.state, realmId)) targets.set(key, splitAgentKey(key));
  for (const target of deps.scheduler.scheduledIn(realmId))
    targets.set(agentKey(target.realmId, target.agentId), target);
  await deleteAll(deps.state, CONFIGS_SCOPE, realmPrefix(realmId));
  for (const target of targets.values()) await deps.scheduler.sync(target.realmId, target.agentId);
  for (const scope of [LAST_TICKS_SCOPE, SEQUENCES_SCOPE, LEASES_SCOPE, SEEN_SCOPE]) {
    await deleteAll(deps.state, scope, realmPrefix(realmId));
  }
  await deleteAll(deps.state, runsScope(realmId));
  for (const target of targets.values()) await deps.publishChanged(target.realmId, target.agentId);
  return { purged: true, pulses: targets.size };
}
