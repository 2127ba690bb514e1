import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Config } from "../config/env.ts";
import type { Engine } from "../engine/engine.ts";
import type { StateClient } from "../engine/state/client.ts";
import { AppError, notFound } from "../shared/errors.ts";
import type { Logger } from "../shared/logger.ts";
import type { KeyCache } from "./auth/cache.ts";
import { registerBodyParsers } from "./body.ts";
import { callRoute } from "./dispatch.ts";
import { toErrorReply } from "./errors.ts";
import { authenticate, enforceRateLimit, type GuardDeps, isProtectedPath } from "./guard.ts";
import { everyResponseHeaders } from "./headers.ts";
import type { HttpMetrics } from "./metrics.ts";
import type { RateLimitStore } from "./rate-limit/store.ts";
import type { HttpRouter } from "./router.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Route template for metrics labels (never the raw URL, which would explode label cardinality). */
    routeTemplate?: string;
  }
}

export interface HttpServerDeps {
  engine: Engine;
  router: HttpRouter;
  metrics: HttpMetrics;
  state: StateClient;
  keyCache: KeyCache;
  rateLimitStore: RateLimitStore;
  logger: Logger;
  config: Pick<Config, "trustProxy" | "rateLimits" | "requestTimeoutMs" | "maxInFlight" | "bodyLimitBytes">;
}

const ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

/** The HTTP front door: every route comes from http triggers, looked up per request in the router. */
export function createHttpServer(deps: HttpServerDeps): FastifyInstance {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    // A hop count is valid for proxy-addr though Fastify's types only list the other forms.
    trustProxy: config.trustProxy as boolean | string[],
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    return503OnClosing: true,
    forceCloseConnections: "idle",
    genReqId: () => randomUUID(),
    routerOptions: { ignoreTrailingSlash: true },
  }) as unknown as FastifyInstance;
  const guard: GuardDeps = {
    state: deps.state,
    keyCache: deps.keyCache,
    rateLimits: config.rateLimits,
    rateLimitStore: deps.rateLimitStore,
  };
  let inFlight = 0;

  registerBodyParsers(app, config.bodyLimitBytes);

  app.addHook("onRequest", async (request, reply) => {
    inFlight++;
    reply.header("X-Request-Id", request.id);
    if (inFlight > config.maxInFlight) {
      reply.header("Retry-After", "1");
      throw new AppError("unavailable", `Server busy: more than ${config.maxInFlight} requests in flight`);
    }
  });
  app.addHook("onSend", async (_request, reply, payload) => {
    reply.headers(everyResponseHeaders);
    return payload;
  });
  app.addHook("onResponse", async (request, reply) => {
    inFlight--;
    const route = request.routeTemplate ?? "unmatched";
    deps.metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime);
  });

  app.setErrorHandler((error, request, reply) => {
    const { status, body, unexpected } = toErrorReply(error);
    if (unexpected) request.log.error({ err: error, reqId: request.id }, "request failed");
    reply.code(status).type("application/json; charset=utf-8").send(JSON.stringify(body));
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `No route for ${request.method} ${request.url.split("?")[0]}` });
  });

  app.get("/healthz", async (request) => {
    request.routeTemplate = "/healthz";
    return { status: "ok" };
  });
  app.get("/metrics", async (request, reply) => {
    request.routeTemplate = "/metrics";
    const principal = await authenticate(guard, request, reply);
    if (principal.kind !== "admin") throw new AppError("forbidden", "/metrics requires an admin key");
    reply.type(deps.metrics.contentType);
    return deps.metrics.text();
  });

  app.route({
    method: [...ALL_METHODS],
    url: "/*",
    handler: (request, reply) => dispatch(deps, guard, request, reply),
  });
  return app;
}

async function dispatch(
  deps: HttpServerDeps,
  guard: GuardDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  if (request.method === "OPTIONS") {
    request.routeTemplate = "preflight";
    reply.code(204).send();
    return;
  }
  const path = request.url.split("?")[0];
  const match = deps.router.find(request.method, path);
  if (match) request.routeTemplate = match.target.template;
  let auth: Awaited<ReturnType<typeof authenticate>> | undefined;
  if (isProtectedPath(path)) {
    await enforceRateLimit(guard, request, reply, match?.target.template);
    auth = await authenticate(guard, request, reply);
  }
  if (!match) throw notFound(`No route for ${request.method} ${path}`);
  await callRoute(deps.engine, match, request, reply, { auth, timeoutMs: deps.config.requestTimeoutMs });
}
