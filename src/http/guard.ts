import type { FastifyReply, FastifyRequest } from "fastify";
import type { RateLimits } from "../config/env.ts";
import type { StateClient } from "../engine/state/client.ts";
import type { Principal } from "../engine/types.ts";
import { nowMs } from "../shared/clock.ts";
import { AppError, unauthorized } from "../shared/errors.ts";
import type { KeyCache } from "./auth/cache.ts";
import { bearerToken, hashKey, verifyKey } from "./auth/keys.ts";
import { rateClassOf } from "./rate-limit/classes.ts";
import type { RateLimitStore } from "./rate-limit/store.ts";

const HOUR_MS = 3_600_000;

/** Routes under these prefixes need a key and are rate limited. */
export function isProtectedPath(path: string): boolean {
  return path.startsWith("/api/") || path === "/api" || path.startsWith("/v1/") || path === "/v1";
}

export interface GuardDeps {
  state: StateClient;
  keyCache: KeyCache;
  rateLimits: RateLimits | false;
  rateLimitStore: RateLimitStore;
}

/** GCRA per client IP and class; sets RateLimit-* headers and refuses with 429 + Retry-After. */
export async function enforceRateLimit(
  deps: GuardDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  routeTemplate: string | undefined,
): Promise<void> {
  if (!deps.rateLimits) return;
  const rateClass = rateClassOf(request.method, routeTemplate);
  const limit = deps.rateLimits[rateClass];
  const decision = await deps.rateLimitStore.consume(`${rateClass}:${request.ip}`, nowMs(), limit, HOUR_MS);
  reply.header("RateLimit-Policy", `${limit};w=3600`);
  reply.header("RateLimit-Limit", String(limit));
  reply.header("RateLimit-Remaining", String(decision.remaining));
  reply.header("RateLimit-Reset", String(Math.ceil(decision.resetMs / 1000)));
  if (decision.allowed) return;
  const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  reply.header("Retry-After", String(retryAfter));
  throw new AppError("rate_limited", `Rate limit exceeded: ${limit} ${rateClass} requests per hour`, {
    retryAfter,
  });
}

/** The principal of a presented key, from the cache or storage; null for an unknown key. */
async function principalOf(deps: GuardDeps, token: string): Promise<Principal | null> {
  const hash = hashKey(token);
  const now = nowMs();
  const cached = deps.keyCache.get(hash, now);
  if (cached) return cached;
  const principal = await verifyKey(deps.state, token);
  if (principal) deps.keyCache.set(hash, principal, now);
  return principal;
}

/** Bearer key → principal, or 401. */
export async function authenticate(
  deps: GuardDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Principal> {
  const token = bearerToken(request.headers.authorization);
  const principal = token ? await principalOf(deps, token) : null;
  if (principal) return principal;
  reply.header("WWW-Authenticate", 'Bearer realm="agentos"');
  throw unauthorized(token ? "Invalid API key" : "Missing API key: send Authorization: Bearer <key>");
}
