import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Config } from "../config/env.ts";
import type { Engine } from "../engine/engine.ts";
import type { StateClient } from "../engine/state/client.ts";
import type { Principal } from "../engine/types.ts";
import { AppError, notFound } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import type { Logger } from "../shared/logger.ts";
import type { KeyCache } from "./auth/cache.ts";
import { registerBodyParsers } from "./body.ts";
import { callRoute } from "./dispatch.ts";
import { toErrorReply } from "./errors.ts";
import { answerClientError, answerFrameworkError } from "./framework-errors.ts";
import { authenticate, enforceRateLimit, type GuardDeps, isProtectedPath } from "./guard.ts";
import { everyResponseHeaders, preflightHeaders } from "./headers.ts";
import type { HttpMetrics } from "./metrics.ts";
import type { RateLimitStore } from "./rate-limit/store.ts";
import { type HttpRouter, pathOf, type RouteMatch } from "./router.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Route template for metrics labels (never the raw URL, which would explode label cardinality). */
    routeTemplate?: string;
    /** Counted in the in-flight total and not yet released. */
    inFlight?: boolean;
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
    // While draining, a request already on an open connection is served (with Connection: close)
    // rather than given Fastify's bare 503, which would carry none of our headers.
    return503OnClosing: false,
    forceCloseConnections: "idle",
    genReqId: () => newId(),
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: (error, _request, reply) => answerFrameworkError(error, reply),
    clientErrorHandler: answerClientError,
  }) as unknown as FastifyInstance;
  const guard: GuardDeps = {
    state: deps.state,
    keyCache: deps.keyCache,
    rateLimits: config.rateLimits,
    rateLimitStore: deps.rateLimitStore,
  };
  let inFlight = 0;

  registerBodyParsers(app, config.bodyLimitBytes);

  // A request leaves the in-flight count once, whether it is answered or its client goes away.
  const release = (request: FastifyRequest) => {
    if (!request.inFlight) return;
    request.inFlight = false;
    inFlight--;
  };

  // Callback-style hooks: on the hot path they avoid a promise per hook and request.
  app.addHook("onRequest", (request, reply, done) => {
    inFlight++;
    request.inFlight = true;
    reply.header("X-Request-Id", request.id);
    if (inFlight > config.maxInFlight) {
      reply.header("Retry-After", "1");
      done(new AppError("unavailable", `Server busy: more than ${config.maxInFlight} requests in flight`));
      return;
    }
    done();
  });
  // onSend runs for every reply, errors and 404s included, so no response can miss these headers.
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.headers(everyResponseHeaders);
    if (request.method === "OPTIONS") reply.headers(preflightHeaders);
    done(null, payload);
  });
  app.addHook("onRequestAbort", (request, done) => {
    release(request);
    done();
  });
  app.addHook("onResponse", (request, reply, done) => {
    release(request);
    const route = request.routeTemplate ?? "unmatched";
    deps.metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime);
    done();
  });

  app.setErrorHandler((error, request, reply) => {
    const { status, body, unexpected } = toErrorReply(error);
    if (unexpected) request.log.error({ err: error, reqId: request.id }, "request failed");
    reply.code(status).type("application/json; charset=utf-8").send(JSON.stringify(body));
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `No route for ${request.method} ${pathOf(request.url)}` });
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

function dispatch(
  deps: HttpServerDeps,
  guard: GuardDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> | undefined {
  if (request.method === "OPTIONS") {
    request.routeTemplate = "preflight";
    reply.code(204).send();
    return undefined;
  }
  const path = pathOf(request.url);
  const match = deps.router.find(request.method, path);
  if (match) request.routeTemplate = match.target.template;
  if (!isProtectedPath(path)) return route(deps, match, path, request, reply, undefined);
  // Both checks answer synchronously on the common path (in-memory limits, cached key).
  const limited = enforceRateLimit(guard, request, reply, match?.target.template);
  if (limited) return limited.then(() => authenticated(deps, guard, match, path, request, reply));
  return authenticated(deps, guard, match, path, request, reply);
}

function authenticated(
  deps: HttpServerDeps,
  guard: GuardDeps,
  match: RouteMatch | null,
  path: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const principal = authenticate(guard, request, reply);
  if (principal instanceof Promise)
    return principal.then((auth) => route(deps, match, path, request, reply, auth));
  return route(deps, match, path, request, reply, principal);
}

function route(
  deps: HttpServerDeps,
  match: RouteMatch | null,
  path: string,
  request: FastifyRequest,
  reply: FastifyReply,
  auth: Principal | undefined,
): Promise<void> {
  if (!match) throw notFound(`No route for ${request.method} ${path}`);
  return callRoute(deps.engine, match, request, reply, { auth, timeoutMs: deps.config.requestTimeoutMs });
}
