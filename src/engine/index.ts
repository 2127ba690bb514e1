import type { Logger } from "../shared/logger.ts";
import { registerEngineBuiltins } from "./builtins.ts";
import { Engine } from "./engine.ts";
import { CronTriggerType, StateCronClaims } from "./trigger-types/cron.ts";
import { LocalBus, type PubSubBus, SubscribeTriggerType } from "./trigger-types/subscribe.ts";

export { Engine } from "./engine.ts";
export { LocalBus, type PubSubBus } from "./trigger-types/subscribe.ts";
export { WorkerClient } from "./worker-client.ts";

export interface CreateEngineOptions {
  /** Carries `publish` to subscribers; in-process by default, PostgreSQL NOTIFY in cluster mode. */
  bus?: PubSubBus;
  logger?: Logger;
  /**
   * Cluster mode: claim every cron tick in state (`cron_claims` scope, through state::set with
   * expectedVersion 0) before running it, so that a tick runs on one node only. Needs the state
   * functions, registered after the engine is created. `{node}` names this node in its claims.
   * Off by default: a single node needs no claim writes.
   */
  cronClaims?: boolean | { node?: string };
}

/**
 * The engine as the server runs it: the built-in functions (publish, engine::functions::list,
 * engine::workers::list) and the cron and subscribe trigger types. State functions and the http
 * trigger type are added by their owners.
 */
export function createEngine(options: CreateEngineOptions = {}): Engine {
  const engine = new Engine({ logger: options.logger });
  const bus = options.bus ?? new LocalBus();
  const trigger = engine.trigger.bind(engine);
  registerEngineBuiltins(engine, bus);
  const claims = options.cronClaims
    ? new StateCronClaims(trigger, {
        logger: engine.logger,
        node: typeof options.cronClaims === "object" ? options.cronClaims.node : undefined,
      })
    : undefined;
  engine.registerTriggerType(
    new CronTriggerType(trigger, engine.logger, {
      claim: claims && ((tickKey) => claims.claim(tickKey)),
    }),
  );
  engine.registerTriggerType(new SubscribeTriggerType(bus, trigger, engine.logger));
  return engine;
}
