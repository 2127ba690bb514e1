import type { FastifyInstance } from "fastify";
import { prepareDataDir } from "./config/data-dir.ts";
import type { Config } from "./config/env.ts";
import type { Engine } from "./engine/engine.ts";
import type { IiiLimits } from "./engine/iii/limits.ts";
import { IiiServer } from "./engine/iii/server.ts";
import { createEngine } from "./engine/index.ts";
import { PgBus } from "./engine/pg-bus.ts";
import { registerSearchFunctions } from "./engine/search/functions.ts";
import { openTextIndex } from "./engine/search/open.ts";
import type { TextIndex } from "./engine/search/types.ts";
import { stateClient } from "./engine/state/client.ts";
import { registerStateFunctions } from "./engine/state/functions.ts";
import { openStateStore } from "./engine/state/open.ts";
import { poolSizes } from "./engine/state/pg-pool.ts";
import type { StateStore } from "./engine/state/types.ts";
import { logTelemetry } from "./engine/telemetry.ts";
import { LocalBus, type PubSubBus } from "./engine/trigger-types/subscribe.ts";
import { registerVectorFunctions } from "./engine/vector/functions.ts";
import { openVectorIndex } from "./engine/vector/open.ts";
import type { VectorIndex } from "./engine/vector/types.ts";
import { bootstrapAdminKey } from "./http/auth/bootstrap.ts";
import { KeyCache, watchRevocations } from "./http/auth/cache.ts";
import { revocationEpoch } from "./http/auth/keys.ts";
import { registerHttpFunctions } from "./http/functions.ts";
import { HttpMetrics } from "./http/metrics.ts";
import { outputChecker } from "./http/output-check.ts";
import { PostgresRateLimitStore } from "./http/rate-limit/postgres-store.ts";
import { MemoryRateLimitStore, type RateLimitStore } from "./http/rate-limit/store.ts";
import { HttpRouter } from "./http/router.ts";
import { createHttpServer } from "./http/server.ts";
import { nowMs } from "./shared/clock.ts";
import { type Logger, silentLogger } from "./shared/logger.ts";
import { startTracing } from "./shared/tracing.ts";
import { registerWorkers } from "./workers/index.ts";

const SHUTDOWN_GRACE_MS = 10_000;

export interface AgentOS {
  engine: Engine;
  store: StateStore;
  http: FastifyInstance;
  metrics: HttpMetrics;
  /** The iii worker WebSocket (remote workers connect here). */
  iii: IiiServer;
  /** Set when this start generated the bootstrap admin key (print it once). */
  generatedAdminKey?: { key: string; file: string };
  /** The iii worker URL (ws://host:port), known once listen() has resolved. */
  engineUrl?: string;
  /** Starts the HTTP server and the iii worker port; resolves the HTTP URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

interface Backends {
  store: StateStore;
  textIndex: TextIndex;
  vectorIndex: VectorIndex;
  bus: PubSubBus;
  rateLimitStore: RateLimitStore & { close?(): Promise<void> };
}

/**
 * Embedded mode: SQLite (state, text and vector indexes in one file), in-process pub/sub and rate
 * limits. Cluster mode (a database URL): all of them in PostgreSQL, so every node shares state,
 * indexes, events and each client's budget. Whatever opened before a failure is closed again.
 */
async function openBackends(config: Config, logger: Logger, background: boolean): Promise<Backends> {
  const pools = poolSizes(config.databasePoolSize);
  const timeouts = config.databaseTimeouts;
  const store = await openStateStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    max: pools.state,
    timeouts,
  });
  let textIndex: TextIndex | undefined;
  let vectorIndex: VectorIndex | undefined;
  let bus: PubSubBus | undefined;
  try {
    textIndex = await openTextIndex({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      background,
      max: pools.search,
      timeouts,
    });
    vectorIndex = await openVectorIndex({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      max: pools.vector,
      timeouts,
      onCodeUpgrade: (codes) =>
        logger.info(
          { codes },
          "vector index: recomputing the codes an older build wrote (once; ~4 s per 100 000)",
        ),
    });
    const indexes = { textIndex, vectorIndex };
    if (!config.databaseUrl) {
      return { store, ...indexes, bus: new LocalBus(), rateLimitStore: new MemoryRateLimitStore() };
    }
    bus = await PgBus.open({ connectionString: config.databaseUrl, logger, max: pools.pubsub, timeouts });
    const rateLimitStore = config.rateLimits
      ? await PostgresRateLimitStore.open({
          connectionString: config.databaseUrl,
          max: pools.rateLimits,
          timeouts,
        })
      : new MemoryRateLimitStore();
    return { store, ...indexes, bus, rateLimitStore };
  } catch (error) {
    await bus?.close();
    await vectorIndex?.close();
    await textIndex?.close();
    await store.close();
    throw error;
  }
}

/** Wires storage, the engine, the HTTP front door and every worker into one service. */
export interface AgentOSOptions {
  logger?: Logger;
  bootstrapAdminKey?: boolean;
  iiiLimits?: Partial<IiiLimits>;
  /**
   * False when the process only uses the service's functions on its storage and does not serve (every
   * CLI command but `serve`): no pulse is scheduled or recovered and no workflow run is resumed, so a
   * running server on the same data dir is left undisturbed. Default true.
   */
  background?: boolean;
}

export async function createAgentOS(config: Config, options: AgentOSOptions = {}): Promise<AgentOS> {
  const logger = options.logger ?? silentLogger();
  prepareDataDir(config.dataDir, (message) => logger.warn(message));
  const backends = await openBackends(config, logger, options.background ?? true);
  const { store, textIndex, vectorIndex, bus, rateLimitStore } = backends;
  const closeBackends = async () => {
    await bus.close();
    await rateLimitStore.close?.();
    await vectorIndex.close();
    await textIndex.close();
    await store.close();
  };
  try {
    // Cluster mode: every node schedules every cron trigger; claims in state let one node run each tick.
    const engine = createEngine({ bus, logger, cronClaims: Boolean(config.databaseUrl) });
    const tracing = startTracing(config.env);
    registerStateFunctions(engine, store);
    registerSearchFunctions(engine, textIndex);
    registerVectorFunctions(engine, vectorIndex);
    const router = new HttpRouter();
    engine.registerTriggerType(router);
    const metrics = new HttpMetrics();
    engine.onInvocationError((functionId, error) =>
      metrics.observeFunctionError(functionId, (error as { code?: string })?.code ?? "internal"),
    );
    engine.onTelemetry((event) => metrics.observe(event));
    engine.onTelemetry(logTelemetry(logger));
    const keyCache = new KeyCache();
    registerHttpFunctions(engine, router, keyCache, config.dataDir);
    // Run first on close, with its deadline: workflows stop between steps and hand their runs over.
    const stopping: Array<(deadline: number) => Promise<void>> = [];
    await registerWorkers(engine, config, {
      background: options.background ?? true,
      onStopping: (hook) => stopping.push(hook),
    });
    const iii = new IiiServer(engine, {
      host: config.engineHost,
      port: config.enginePort,
      token: config.engineToken,
      limits: { maxFrameBytes: config.engineMaxFrameBytes, ...options.iiiLimits },
      logger,
    });

    const state = stateClient((request) => engine.trigger(request));
    const http = createHttpServer({
      engine,
      router,
      metrics,
      state,
      keyCache,
      rateLimitStore,
      logger,
      config,
      ...(config.checkOutputs ? { checkOutput: outputChecker(engine.functions) } : {}),
    });
    const bootstrap =
      options.bootstrapAdminKey === false
        ? {}
        : await bootstrapAdminKey(state, { apiKey: config.apiKey, dataDir: config.dataDir });
    let revocations: { stop(): void } | undefined;

    const service: AgentOS = {
      engine,
      store,
      http,
      metrics,
      iii,
      generatedAdminKey:
        bootstrap.generatedKey && bootstrap.keyFile
          ? { key: bootstrap.generatedKey, file: bootstrap.keyFile }
          : undefined,
      async listen() {
        service.engineUrl = await iii.listen();
        revocations = watchRevocations(
          keyCache,
          () => revocationEpoch(state),
          (error) => logger.warn({ err: error }, "could not read the API key revocation epoch"),
        );
        try {
          return await http.listen({ port: config.port, host: config.host });
        } catch (error) {
          revocations.stop();
          await iii.close();
          throw error;
        }
      },
      async close() {
        // One grace period for the whole drain: requests first, then fire-and-forget work.
        const deadline = nowMs() + SHUTDOWN_GRACE_MS;
        revocations?.stop();
        // Alongside the requests (a synchronous run's request ends once it stops between steps).
        const stopped = Promise.allSettled(stopping.map((hook) => hook(deadline)));
        await closeHttp(http, deadline);
        await withDeadline(stopped, deadline);
        // Workers go next: their functions leave and calls still waiting on them fail at once.
        await iii.close();
        // Stop cron and subscriptions, let fire-and-forget work finish, then close storage.
        engine.shutdown();
        await withDeadline(engine.drain(), deadline);
        await closeBackends();
        await withDeadline(tracing?.flush() ?? Promise.resolve(), deadline).catch(() => undefined);
      },
    };
    return service;
  } catch (error) {
    await closeBackends();
    throw error;
  }
}

/**
 * Stops accepting and waits (up to the grace period) for in-flight requests. Node closes only the
 * connections idle when close() begins: a keep-alive connection whose request was in flight would stay
 * open until its client hangs up, holding the exit for the whole grace period. So keep closing
 * connections as they turn idle until the server has closed.
 */
async function closeHttp(http: FastifyInstance, deadline: number): Promise<void> {
  const reaper = setInterval(() => http.server.closeIdleConnections(), 50);
  try {
    await withDeadline(http.close(), deadline);
  } finally {
    clearInterval(reaper);
  }
}

async function withDeadline(work: Promise<unknown>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ms = Math.max(0, deadline - nowMs());
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
