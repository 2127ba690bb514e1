import type { FastifyReply, FastifyRequest } from "fastify";
import { defaultRateLimits, type RateClass, type RateLimits } from "../config/env.ts";
import type { StateClient } from "../engine/state/client.ts";
import { anonymousPrincipal, type Principal } from "../engine/types.ts";
import { nowMs } from "../shared/clock.ts";
import { AppError, unauthorized } from "../shared/errors.ts";
import { andThen, type MaybePromise } from "../shared/maybe-promise.ts";
import type { KeyCache } from "./auth/cache.ts";
import { bearerToken, hashKey, principalForHash } from "./auth/keys.ts";
import { clientOf } from "./client-address.ts";
import { rateClassOf } from "./rate-limit/classes.ts";
import type { GcraDecision } from "./rate-limit/gcra.ts";
import type { RateLimitStore } from "./rate-limit/store.ts";
import { type HttpRouter, type RouteMatch, requestPath } from "./router.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The http trigger this request is for, found before the body is read; null when none matches. */
    routeMatch?: RouteMatch | null;
    /** Who is calling: the API key's principal, or anonymous on routes that need no key. */
    principal?: Principal;
  }
}

const HOUR_MS = 3_600_000;

/** Routes under these prefixes need a key and are rate limited. */
export function isProtectedPath(path: string): boolean {
  return path.startsWith("/api/") || path === "/api" || path.startsWith("/v1/") || path === "/v1";
}

/**
 * The path as the router understands it: percent-escapes decoded, repeated slashes collapsed.
 * Judging protection on anything less lets `//api/keys` or `/%61pi/keys` reach a route without a key.
 */
function canonicalPath(path: string): string {
  let decoded = path;
  if (path.includes("%")) {
    try {
      decoded = decodeURIComponent(path);
    } catch {
      // Undecodable escapes: Fastify refuses such a URL before routing; judge the raw text meanwhile.
    }
  }
  return decoded.includes("//") ? decoded.replace(/\/{2,}/g, "/") : decoded;
}

/**
 * Runs before the body is read: finds the route, and on protected paths identifies the caller, applies
 * the rate limit and refuses a missing or invalid key, so unauthenticated clients cannot make the server
 * buffer and parse bodies. Sets request.routeMatch and request.principal (anonymous on routes that need
 * no key).
 */
export function guardRequest(
  deps: GuardDeps,
  router: HttpRouter,
  request: FastifyRequest,
  reply: FastifyReply,
): MaybePromise<void> {
  const path = requestPath(request.url);
  const match = router.find(request.method, path);
  request.routeMatch = match;
  if (match) request.routeTemplate = match.target.template;
  if (!isProtectedPath(canonicalPath(path)) && !(match && isProtectedPath(match.target.template))) {
    // A public route that also takes an API key (the generic webhook): a key it is given must be valid,
    // and spends its budget as on /api: the generic webhook runs the same turn as an agent message, so
    // a realm key must not get around the message budget by calling it there.
    if (match?.target.config.api_key === "optional" && bearerToken(request.headers.authorization)) {
      return andThen(authenticate(deps, request, reply), (principal) =>
        andThen(enforceRateLimit(deps, request, reply, match.target.template, principal), () => {
          request.principal = principal;
        }),
      );
    }
    request.principal = anonymousPrincipal;
    return undefined;
  }
  const token = bearerToken(request.headers.authorization);
  // The caller is known before the limit is applied, because whose budget a request spends depends on
  // it; a refused key is still counted (against its address) before the 401.
  return andThen(lookupPrincipal(deps, token), (principal) =>
    andThen(enforceRateLimit(deps, request, reply, match?.target.template, principal), () => {
      request.principal = principal ?? refuseKey(reply, token);
    }),
  );
}

export interface GuardDeps {
  state: StateClient;
  keyCache: KeyCache;
  rateLimits: RateLimits | false;
  /** Admin keys are exempt from rate limits unless this is set (AGENTOS_RATE_LIMIT_ADMIN). */
  rateLimitAdmin: boolean;
  rateLimitStore: RateLimitStore;
}

/**
 * GCRA per class and budget (see budgetOf); sets RateLimit-* headers and refuses with 429 + Retry-After.
 * `principal` is undefined for a request without a valid key.
 */
export function enforceRateLimit(
  deps: GuardDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  routeTemplate: string | undefined,
  principal: Principal | undefined,
): MaybePromise<void> {
  if (!deps.rateLimits) return undefined;
  const rateClass = rateClassOf(request.method, routeTemplate);
  const budget = budgetOf(deps, rateClass, principal, clientOf(request.ip));
  if (budget === undefined) return undefined;
  const limit = deps.rateLimits[rateClass] ?? defaultRateLimits[rateClass];
  const decision = deps.rateLimitStore.consume(`${rateClass}:${budget}`, nowMs(), limit, HOUR_MS);
  return andThen(decision, (settled) => applyDecision(reply, rateClass, settled));
}

/**
 * Whose budget a request spends (DESIGN §6), or undefined when it spends none:
 * - an admin key spends none unless the operator asks for it: the console's user (and scripts run
 *   with the admin key) must never be locked out of their own service;
 * - the gateway (`/v1/*`) is budgeted per key: programs call it in loops, often many from one
 *   address (one host, a NAT), so an address budget would either be too small or meaningless;
 * - everything else per client address, as the spec says: realm keys, and requests with a missing or
 *   invalid key (so guessing keys spends the guesser's budget).
 */
function budgetOf(
  deps: GuardDeps,
  rateClass: RateClass,
  principal: Principal | undefined,
  address: string,
): string | undefined {
  if (principal?.kind === "admin" && !deps.rateLimitAdmin) return undefined;
  if (rateClass === "gateway" && (principal?.kind === "admin" || principal?.kind === "realm")) {
    return `key:${principal.keyId}`;
  }
  return address;
}

function applyDecision(reply: FastifyReply, rateClass: string, decision: GcraDecision): void {
  const { limit } = decision;
  reply.header("RateLimit-Limit", String(limit));
  reply.header("RateLimit-Remaining", String(decision.remaining));
  reply.header("RateLimit-Reset", String(Math.ceil(decision.resetMs / 1000)));
  if (decision.allowed) return;
  const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  reply.header("Retry-After", String(retryAfter));
  throw new AppError(
    "rate_limited",
    `Rate limit exceeded: ${limit} ${rateClass} requests per hour; try again in ${retryAfter} s ` +
      `(the operator sets the limits with AGENTOS_RATE_LIMITS, e.g. ${rateClass}=${limit * 10})`,
    { retryAfter },
  );
}

/** The key's principal (synchronously when cached), or undefined for no key or an unknown one. */
function lookupPrincipal(
  deps: GuardDeps,
  token: string | null | undefined,
): MaybePromise<Principal | undefined> {
  if (!token) return undefined;
  const cached = deps.keyCache.get(token, nowMs());
  if (cached) return cached;
  const hash = hashKey(token);
  const since = deps.keyCache.current();
  return principalForHash(deps.state, hash).then((principal) => {
    if (!principal) return undefined;
    deps.keyCache.set(token, hash, principal, nowMs(), since);
    return principal;
  });
}

/**
 * Bearer key → principal (synchronously when the key is cached), or a 401 — for the routes outside the
 * protected paths that take a key (/metrics, the generic webhook). A refused key is counted against its
 * address first, as on protected paths, so guessing keys here spends the guesser's budget too (429).
 */
export function authenticate(
  deps: GuardDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): MaybePromise<Principal> {
  const token = bearerToken(request.headers.authorization);
  return andThen(lookupPrincipal(deps, token), (principal) => {
    if (principal) return principal;
    return andThen(enforceRateLimit(deps, request, reply, request.routeTemplate, undefined), () =>
      refuseKey(reply, token),
    );
  });
}

function refuseKey(reply: FastifyReply, token: string | null | undefined): never {
  return refuse(reply, token ? "Invalid API key" : "Missing API key: send Authorization: Bearer <key>");
}

function refuse(reply: FastifyReply, message: string): never {
  reply.header("WWW-Authenticate", 'Bearer realm="agentos"');
  throw unauthorized(message);
}
