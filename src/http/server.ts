import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Config } from "../config/env.ts";
import type { Engine } from "../engine/engine.ts";
import type { StateClient } from "../engine/state/client.ts";
import { anonymousPrincipal } from "../engine/types.ts";
import { AppError, notFound } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import type { Logger } from "../shared/logger.ts";
import type { KeyCache } from "./auth/cache.ts";
import { registerBodyParsers } from "./body.ts";
import { clientOf } from "./client-address.ts";
import { registerConsole } from "./console.ts";
import { callRoute } from "./dispatch.ts";
import { openAiShaped, toErrorReply } from "./errors.ts";
import { answerClientError, answerFrameworkError } from "./framework-errors.ts";
import { authenticate, type GuardDeps, guardRequest } from "./guard.ts";
import { everyResponseHeaders, preflightHeaders } from "./headers.ts";
import type { HttpMetrics } from "./metrics.ts";
import type { OutputCheck } from "./output-check.ts";
import type { RateLimitStore } from "./rate-limit/store.ts";
import { type HttpRouter, MAX_PARAM_LENGTH, requestPath } from "./router.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Route template for metrics labels (never the raw URL, which would explode label cardinality). */
    routeTemplate?: string;
    /** Counted in its client's in-flight share (every request but /healthz). */
    countsInFlight?: boolean;
    /** Holds one of the global in-flight slots (taken once its body has arrived). */
    holdsSlot?: boolean;
    /** Counted in its realm's in-flight share (a realm key's request, once its body has arrived). */
    realmSlot?: string;
    /** The route's function at work: settles when it has answered (or failed). */
    handling?: Promise<unknown>;
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
  /** Set when config.checkOutputs: throws when an answer does not match its documented output. */
  checkOutput?: OutputCheck;
  config: Pick<
    Config,
    | "trustProxy"
    | "checkOutputs"
    | "rateLimits"
    | "rateLimitAdmin"
    | "requestTimeoutMs"
    | "receiveTimeoutMs"
    | "headersTimeoutMs"
    | "maxInFlight"
    | "maxInFlightPerClient"
    | "maxInFlightPerRealm"
    | "bodyLimitBytes"
  >;
}

const ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

/** The HTTP front door: every route comes from http triggers, looked up per request in the router. */
export function createHttpServer(deps: HttpServerDeps): FastifyInstance {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    // One line per request, written when it ends (see `finished`), instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // A hop count is valid for proxy-addr though Fastify's types only list the other forms.
    trustProxy: config.trustProxy as boolean | string[],
    bodyLimit: config.bodyLimitBytes,
    // Node cuts off a request whose headers, or whole body, do not arrive in time (408 and close), so
    // slow or stalled uploads cannot hold in-flight slots for long. It checks every `interval`.
    requestTimeout: config.receiveTimeoutMs,
    http: {
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: checkingInterval(config.headersTimeoutMs),
    },
    // While draining, a request already on an open connection is served (with Connection: close)
    // rather than given Fastify's bare 503, which would carry none of our headers.
    return503OnClosing: false,
    forceCloseConnections: "idle",
    genReqId: () => newId(),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: (error, _request, reply) => answerFrameworkError(error, reply),
    clientErrorHandler: answerClientError,
  }) as unknown as FastifyInstance;
  const guard: GuardDeps = {
    state: deps.state,
    keyCache: deps.keyCache,
    rateLimits: config.rateLimits,
    rateLimitAdmin: config.rateLimitAdmin,
    rateLimitStore: deps.rateLimitStore,
  };
  // Two counts: requests being handled (a global slot each, taken once the body has arrived) and
  // requests per client address from their first byte (receiving or handled). A socket that trickles
  // its body so costs its own address's share and a file descriptor, never a slot others need.
  let inFlight = 0;
  const perClient = new Map<string, number>();
  const perRealm = new Map<string, number>();

  registerBodyParsers(app, config.bodyLimitBytes);

  // When a response closes (answered, failed or abandoned by its client) it is measured, and leaves the
  // in-flight counts once its function is done too; an abandoned one is labelled 499, as nginx does.
  // The request line and headers have arrived (the body may still be coming): at debug level only.
  const debugLogs = deps.logger.isLevelEnabled("debug");
  const finished = (request: FastifyRequest, reply: FastifyReply, client: string | undefined) => {
    const heldSlot = request.holdsSlot === true;
    const realm = request.realmSlot;
    // Should the hooks still run after the connection closed, the request must not take a slot then.
    request.countsInFlight = false;
    request.holdsSlot = false;
    request.realmSlot = undefined;
    const release = () => {
      if (heldSlot) inFlight--;
      if (realm !== undefined) leave(perRealm, realm);
      if (client !== undefined) leave(perClient, client);
    };
    // A client hanging up does not stop the function it called: the request keeps its slot and its
    // client's share until the function is done, or sending and hanging up in a loop would run any
    // number of functions at once past both limits.
    if (request.handling) request.handling.then(release, release);
    else release();
    const status = reply.raw.writableFinished ? reply.statusCode : 499;
    const route = request.routeTemplate ?? "unmatched";
    deps.metrics.observeRequest(request.method, route, status, reply.elapsedTime);
    if (deps.logger.isLevelEnabled("info")) {
      request.log.info(
        { method: request.method, route, status, ms: Math.round(reply.elapsedTime * 10) / 10 },
        "request",
      );
    }
  };

  // One callback-style hook does all per-request bookkeeping before the body: every extra hook costs on
  // each request.
  app.addHook("onRequest", (request, reply, done) => {
    if (debugLogs) {
      request.log.debug(
        { method: request.method, url: request.url, remotePort: request.socket.remotePort },
        "incoming request",
      );
    }
    // /healthz counts nowhere: it is how a balancer tells a busy node from a dead one, so it must answer.
    const client = isHealthz(request.url) ? undefined : clientOf(request.ip);
    if (client !== undefined) {
      request.countsInFlight = true;
      perClient.set(client, (perClient.get(client) ?? 0) + 1);
    }
    reply.raw.once("close", () => finished(request, reply, client));
    // A client that stops reading leaves its answer waiting in the socket's buffer, holding the
    // request's slot and the answer's memory for as long as it keeps the connection open. Node reports
    // a socket idle for this long (no bytes in or out, no write progressing): the connection is closed
    // when an answer is waiting, and left alone when nothing is (a function still at work, a stream
    // between events).
    reply.raw.setTimeout(config.receiveTimeoutMs, () => {
      const socket = reply.raw.socket;
      if (socket && socket.writableLength > 0) socket.destroy();
    });
    // Set before anything can fail, so every response (errors and 404s included) carries them.
    reply.headers(everyResponseHeaders);
    reply.header("X-Request-Id", request.id);
    if (client !== undefined && (perClient.get(client) ?? 0) > config.maxInFlightPerClient) {
      // Closed after the answer: an unread body must not keep the socket (and its client) around.
      reply.header("Retry-After", "1").header("Connection", "close");
      done(tooManyFromClient(config, client));
      return;
    }
    if (request.method === "OPTIONS") {
      reply.headers(preflightHeaders);
      done();
      return;
    }
    try {
      const guarded = guardRequest(guard, deps.router, request, reply);
      if (guarded instanceof Promise) guarded.then(() => done(), done);
      else done();
    } catch (error) {
      done(error as Error);
    }
  });

  // The body has arrived (or there is none): only now does the request take one of the global slots.
  app.addHook("preHandler", (request, reply, done) => {
    if (!request.countsInFlight) {
      done();
      return;
    }
    inFlight++;
    request.holdsSlot = true;
    if (inFlight > config.maxInFlight) {
      reply.header("Retry-After", "1");
      done(serverBusy(config));
      return;
    }
    const principal = request.principal;
    if (principal?.kind === "realm") {
      const held = (perRealm.get(principal.realmId) ?? 0) + 1;
      perRealm.set(principal.realmId, held);
      request.realmSlot = principal.realmId;
      if (held > config.maxInFlightPerRealm) {
        reply.header("Retry-After", "1");
        done(tooManyFromRealm(config, principal.realmId));
        return;
      }
    }
    done();
  });

  app.setErrorHandler((error, request, reply) => {
    const { status, body, unexpected } = toErrorReply(error);
    if (unexpected) request.log.error({ err: error, reqId: request.id }, "request failed");
    const shaped = request.url.startsWith("/v1/") ? openAiShaped(status, body) : body;
    reply.code(status).type("application/json; charset=utf-8").send(JSON.stringify(shaped));
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `No route for ${request.method} ${requestPath(request.url)}` });
  });

  registerConsole(app);
  app.get("/healthz", async (request) => {
    request.routeTemplate = "/healthz";
    return { status: "ok" };
  });
  app.get("/metrics", async (request, reply) => {
    request.routeTemplate = "/metrics";
    const principal = await authenticate(guard, request, reply);
    if (principal.kind !== "admin") throw new AppError("forbidden", "/metrics requires an admin key");
    const unknown = Object.keys(request.query as Record<string, unknown>);
    if (unknown.length > 0)
      throw new AppError("validation", `/metrics takes no query parameters: ${unknown.join(", ")}`);
    reply.type(deps.metrics.contentType);
    return deps.metrics.text();
  });

  app.route({
    method: [...ALL_METHODS],
    url: "/*",
    handler: (request, reply) => dispatch(deps, request, reply),
  });
  return app;
}

/** The catch-all route: the guard already found the route and the caller before the body was read. */
function dispatch(
  deps: HttpServerDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> | undefined {
  if (request.method === "OPTIONS") {
    request.routeTemplate = "preflight";
    reply.code(204).send();
    return undefined;
  }
  const match = request.routeMatch;
  if (!match) throw notFound(`No route for ${request.method} ${requestPath(request.url)}`);
  // Resolving with the reply tells Fastify the reply is handled: a streamed body would otherwise be cut
  // off when the handler's promise settles before the stream has been written.
  const handling = callRoute(deps.engine, match, request, reply, {
    auth: request.principal ?? anonymousPrincipal,
    timeoutMs: deps.config.requestTimeoutMs,
    checkOutput: deps.checkOutput,
  }).then(() => reply);
  request.handling = handling;
  return handling;
}

function isHealthz(url: string): boolean {
  return url === "/healthz" || url.startsWith("/healthz?");
}

/** The refusal when this client has too many requests in flight (receiving or handled). */
function tooManyFromClient(config: Pick<Config, "maxInFlightPerClient">, client: string): AppError {
  return new AppError(
    "rate_limited",
    `Too many requests in flight from ${client}: at most ${config.maxInFlightPerClient} at once (AGENTOS_MAX_IN_FLIGHT_PER_CLIENT)`,
  );
}

/** The refusal when a realm's keys have too many requests being handled. */
function tooManyFromRealm(config: Pick<Config, "maxInFlightPerRealm">, realmId: string): AppError {
  return new AppError(
    "rate_limited",
    `Too many requests in flight for realm ${realmId}: at most ${config.maxInFlightPerRealm} at once (AGENTOS_MAX_IN_FLIGHT_PER_REALM)`,
  );
}

/** One request fewer in a share (an address's, a realm's); a share at zero is forgotten. */
function leave(shares: Map<string, number>, holder: string): void {
  const left = (shares.get(holder) ?? 1) - 1;
  if (left > 0) shares.set(holder, left);
  else shares.delete(holder);
}

/** The refusal when the service has too many requests being handled. */
function serverBusy(config: Pick<Config, "maxInFlight">): AppError {
  return new AppError(
    "unavailable",
    `Server busy: more than ${config.maxInFlight} requests in flight (AGENTOS_MAX_IN_FLIGHT)`,
  );
}

/** How often Node checks for late headers and bodies: often enough that the timeouts hold to ~25 %. */
function checkingInterval(headersTimeoutMs: number): number {
  return Math.max(50, Math.min(1000, Math.floor(headersTimeoutMs / 4)));
}
