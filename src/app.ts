import type { FastifyInstance } from "fastify";
import type { Config } from "./config/env.ts";
import type { Engine } from "./engine/engine.ts";
import { createEngine } from "./engine/index.ts";
import { PgBus } from "./engine/pg-bus.ts";
import { stateClient } from "./engine/state/client.ts";
import { registerStateFunctions } from "./engine/state/functions.ts";
import { openStateStore } from "./engine/state/open.ts";
import type { StateStore } from "./engine/state/types.ts";
import { LocalBus, type PubSubBus } from "./engine/trigger-types/subscribe.ts";
import { bootstrapAdminKey } from "./http/auth/bootstrap.ts";
import { KeyCache } from "./http/auth/cache.ts";
import { registerHttpFunctions } from "./http/functions.ts";
import { HttpMetrics } from "./http/metrics.ts";
import { MemoryRateLimitStore } from "./http/rate-limit/store.ts";
import { HttpRouter } from "./http/router.ts";
import { createHttpServer } from "./http/server.ts";
import { type Logger, silentLogger } from "./shared/logger.ts";
import { registerWorkers } from "./workers/index.ts";

const SHUTDOWN_GRACE_MS = 10_000;

export interface AgentOS {
  engine: Engine;
  store: StateStore;
  http: FastifyInstance;
  metrics: HttpMetrics;
  /** Set when this start generated the bootstrap admin key (print it once). */
  generatedAdminKey?: { key: string; file: string };
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** Wires storage, the engine, the HTTP front door and every worker into one service. */
export async function createAgentOS(
  config: Config,
  options: { logger?: Logger; bootstrapAdminKey?: boolean } = {},
): Promise<AgentOS> {
  const logger = options.logger ?? silentLogger();
  const store = await openStateStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const bus: PubSubBus = config.databaseUrl ? await PgBus.open(config.databaseUrl) : new LocalBus();
  const engine = createEngine({ bus, logger });
  registerStateFunctions(engine, store);

  const router = new HttpRouter();
  engine.registerTriggerType(router);
  const metrics = new HttpMetrics();
  engine.onInvocationError((functionId, error) =>
    metrics.observeFunctionError(functionId, (error as { code?: string })?.code ?? "internal"),
  );
  const keyCache = new KeyCache();
  registerHttpFunctions(engine, router, keyCache);
  registerWorkers(engine, config);

  const state = stateClient((request) => engine.trigger(request));
  const http = createHttpServer({
    engine,
    router,
    metrics,
    state,
    keyCache,
    rateLimitStore: new MemoryRateLimitStore(),
    logger,
    config,
  });
  const bootstrap =
    options.bootstrapAdminKey === false
      ? {}
      : await bootstrapAdminKey(state, { apiKey: config.apiKey, dataDir: config.dataDir });

  return {
    engine,
    store,
    http,
    metrics,
    generatedAdminKey:
      bootstrap.generatedKey && bootstrap.keyFile
        ? { key: bootstrap.generatedKey, file: bootstrap.keyFile }
        : undefined,
    listen: () => http.listen({ port: config.port, host: config.host }),
    async close() {
      // Stop accepting, let in-flight requests and fire-and-forget work finish, then close storage.
      await withDeadline(http.close(), SHUTDOWN_GRACE_MS);
      engine.shutdown();
      await withDeadline(engine.drain(), SHUTDOWN_GRACE_MS);
      await bus.close();
      await store.close();
    },
  };
}

async function withDeadline(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
