import { publishEventAwaited } from "../../engine/events.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess } from "../../shared/access.ts";
import { RealmRunShare } from "../../shared/realm-share.ts";
import { recoverLeases } from "./lease.ts";
import { invoke, type PulseDeps, purgeAgent, purgeRealm, register, status, toggle } from "./pulses.ts";
import { PulseScheduler } from "./scheduler.ts";
import {
  invokeInput,
  pulseConfig,
  pulseRun,
  pulseStatus,
  realmInput,
  registerInput,
  statusInput,
  targetInput,
  tickInput,
  toggleInput,
} from "./schema.ts";
import { tick } from "./tick.ts";

const DEFAULT_RUNS_PER_REALM = 16;

/** Published after a pulse config changes; every node's pulse worker re-syncs its trigger for the agent. */
export const PULSE_CHANGED_TOPIC = "pulse.changed";

export interface PulseOptions {
  /** Where start-up problems are reported (a stored pulse that could not be scheduled). */
  warn?: (message: string) => void;
  /**
   * Single node (no shared database): at start every run lease is a leftover of the previous process,
   * so leases are cleared and their runs marked interrupted at once. Off by default, because in a
   * cluster another node's live run holds its lease (stale leases are then taken over when they expire).
   */
  embedded?: boolean;
  /**
   * False in a process that opens the service's storage without serving it (the CLI's `keys` and
   * `config` commands): no pulse is scheduled, no lease is recovered and pulse.changed is not followed,
   * so the process neither runs ticks nor disturbs the runs of the process that serves. The functions
   * are still registered. Default true.
   */
  background?: boolean;
  /** Cron runs of one realm at once on this node (AGENTOS_PULSE_RUNS_PER_REALM); default 16. */
  runsPerRealm?: number;
}

/**
 * Pulse: agents woken on a cron schedule (SPEC "Pulse"). Registers the functions and routes, and at
 * start (`ready`) schedules every stored pulse and subscribes to changes made on other nodes.
 */
export function registerPulse(worker: WorkerClient, options: PulseOptions = {}): { ready: Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const background = options.background ?? true;
  const scheduler = new PulseScheduler(worker, state, { passive: !background });
  const warn = options.warn ?? (() => undefined);
  const deps: PulseDeps = {
    trigger,
    state,
    scheduler,
    realmShare: new RealmRunShare(options.runsPerRealm ?? DEFAULT_RUNS_PER_REALM),
    publishChanged: async (realmId, agentId) => {
      // The change is stored and this node's trigger already matches it: a failed publish only delays
      // other nodes until their next start, so it does not fail the caller's request.
      await publishEventAwaited(trigger, PULSE_CHANGED_TOPIC, { realmId, agentId }, (error) =>
        warn(`pulse.changed not published: ${(error as Error).message}`),
      );
    },
  };

  worker.registerFunction(
    {
      id: "pulse::register",
      description:
        "Schedule agent {agentId} of realm {realmId} on six-field {cron}; returns the pulse config",
      input: registerInput,
      output: pulseConfig,
    },
    (input, ctx) => register(deps, input, ctx),
  );
  worker.registerFunction(
    {
      id: "pulse::toggle",
      description: "Enable or disable an agent's pulse: {enabled}",
      input: toggleInput,
      output: pulseConfig,
    },
    (input, ctx) => toggle(deps, input, ctx),
  );
  worker.registerFunction(
    {
      id: "pulse::invoke",
      description: "Wake an agent now; returns the finished pulse run",
      input: invokeInput,
      output: pulseRun,
    },
    (input, ctx) => invoke(deps, input, ctx),
  );
  worker.registerFunction(
    {
      id: "pulse::status",
      description: "An agent's pulse: {config, recentRuns (newest first), lastTick}",
      input: statusInput,
      output: pulseStatus,
    },
    (input, ctx) => status(deps, input, ctx),
  );
  worker.registerFunction(
    { id: "pulse::tick", description: "One cron tick of an agent's pulse (internal)", input: tickInput },
    (input, ctx) => {
      assertRealmAccess(ctx, input.realmId);
      return tick(deps, input);
    },
  );
  worker.registerFunction(
    {
      id: "pulse::sync",
      description: "Align this node's cron trigger for an agent with its stored pulse (internal)",
      input: targetInput,
    },
    async ({ realmId, agentId }, ctx) => {
      assertRealmAccess(ctx, realmId);
      await scheduler.sync(realmId, agentId);
      return { synced: true };
    },
  );
  worker.registerFunction(
    {
      id: "pulse::purge_realm",
      description: "Stop and delete every pulse of a realm (internal)",
      input: realmInput,
    },
    ({ realmId }, ctx) => purgeRealm(deps, realmId, ctx),
  );

  worker.registerFunction(
    {
      id: "pulse::purge_agent",
      description: "Stop and delete a deleted agent's pulse (internal)",
      input: targetInput,
    },
    (target, ctx) => purgeAgent(deps, target, ctx),
  );

  worker.registerRoute("pulse::register", "POST", "/api/pulse/register");
  worker.registerRoute("pulse::invoke", "POST", "/api/pulse/invoke");
  worker.registerRoute("pulse::status", "GET", "/api/pulse/:realmId/:agentId");
  worker.registerRoute("pulse::toggle", "PATCH", "/api/pulse/:realmId/:agentId");
  if (!background) return { ready: Promise.resolve() };
  worker.registerTrigger({
    type: "subscribe",
    function_id: "pulse::sync",
    config: { topic: PULSE_CHANGED_TOPIC },
  });

  const ready = (async () => {
    if (options.embedded) await recoverLeases(state);
    await scheduler.restoreAll(warn);
  })();
  // Awaited by the start-up later; until then a failure must not count as an unhandled rejection.
  ready.catch(() => undefined);
  return { ready };
}
