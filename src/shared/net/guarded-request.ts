/**
 * HTTP(S) requests under the SSRF guard, for every part of the service that fetches a URL someone else
 * named: the web tools, bridge runtimes, channel callbacks.
 */
import { type ClientRequest, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import type { Principal } from "../../engine/types.ts";
import { AppError, badRequest } from "../errors.ts";
import { createDnsResolver, type ResolvedAddress, type Resolver } from "./dns-resolver.ts";
import { type AddressPolicy, assertAddressAllowed, bareHostname, checkWebUrl, isIpLiteral } from "./ssrf.ts";

/** The spec's fixed User-Agent: the service with version 0.0.1 (not the package version). */
export const USER_AGENT = "AgentOS/0.0.1";
export const DEFAULT_TIMEOUT_MS = 30_000;
export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export type { ResolvedAddress, Resolver };

/**
 * The resolver for names someone else chose: the system's DNS servers through c-ares, never
 * `dns.lookup` (whose getaddrinfo calls a hostile name could keep on libuv's threadpool), with a
 * deadline, a bound on lookups at once shared by the whole process and fairly between realms (a
 * policy's `realm`), and answers kept for their TTL (see ./dns-resolver.ts).
 */
export const systemResolver: Resolver = createDnsResolver();

export interface NetworkPolicy extends AddressPolicy {
  resolve: Resolver;
  /**
   * The realm the requests are for (its agents' fetches, its sandbox programs): its name lookups count
   * against its own share of the resolver. Absent: the service's own (operator-configured) requests.
   */
  realm?: string;
}

/**
 * The policy for requests made for this caller: a realm key's or agent's calls count against that
 * realm's share of name lookups; an admin's and the service's against the service's.
 */
export function policyForCaller(policy: NetworkPolicy, auth: Principal): NetworkPolicy {
  return auth.kind === "realm" ? { ...policy, realm: auth.realmId } : policy;
}

/**
 * A `lookup` for node's sockets: resolves the name, refuses the connection when any address is blocked,
 * and hands the socket exactly the addresses it checked. Since the socket connects to what this returns,
 * the check is on the address actually used, and a second (rebound) DNS answer never comes into play.
 */
export function guardedLookup(policy: NetworkPolicy, target?: () => string): LookupFunction {
  return (hostname, options, callback) => {
    resolveChecked(hostname, target?.() ?? hostname, policy, options.family).then(
      (addresses) => {
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
}

/**
 * The SSRF rule for a URL some other client will fetch (a browser): http(s) only, and the literal IP or
 * every address the host name resolves to allowed. Throws the rule's error; answers the parsed URL.
 */
export async function assertUrlAllowed(raw: string | URL, policy: NetworkPolicy): Promise<URL> {
  const url = checkWebUrl(raw, policy);
  const host = bareHostname(url);
  if (!isIpLiteral(host)) await resolveChecked(host, url.href, policy, undefined);
  return url;
}

async function resolveChecked(
  hostname: string,
  target: string,
  policy: NetworkPolicy,
  family: number | string | undefined,
): Promise<ResolvedAddress[]> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await policy.resolve(hostname, { realm: policy.realm });
  } catch (error) {
    const failure = error as (NodeJS.ErrnoException & { overShare?: string }) | undefined;
    if (failure?.overShare) {
      // The realm's own lookups are too many: its doing, said as such (the message names its share).
      throw new AppError("rate_limited", `Could not resolve host ${hostname}: EBUSY, ${failure.overShare}`, {
        cause: error,
      });
    }
    const code = failure?.code ?? "resolution failed";
    throw new AppError("unavailable", `Could not resolve host ${hostname}: ${code}`, { cause: error });
  }
  // Every answer must pass, not just the one a socket would pick first.
  for (const { address } of addresses) assertAddressAllowed(address, target, policy);
  const only = family === 4 || family === "IPv4" ? 4 : family === 6 || family === "IPv6" ? 6 : undefined;
  const wanted = only ? addresses.filter((each) => each.family === only) : addresses;
  if (wanted.length === 0) {
    throw new AppError("unavailable", `Could not resolve host ${hostname}: no addresses`);
  }
  return wanted.map(({ address, family }) => ({ address, family }));
}

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

export interface GuardedRequestInit {
  method?: (typeof HTTP_METHODS)[number];
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Bytes of body kept; a longer body is cut here, the connection closed and `truncated` set. */
  maxBytes: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  policy: NetworkPolicy;
  maxRedirects?: number;
}

export interface GuardedResponse {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
}

interface Hop {
  status: number;
  headers: IncomingHttpHeaders;
  location?: string;
  body: Buffer;
  truncated: boolean;
}

/**
 * An HTTP(S) request under the SSRF guard: http(s) only, literal IPs and resolved addresses checked,
 * redirects (at most 5) followed by hand and each hop checked the same way, the body bounded, and one
 * overall timeout. Any status is returned; network failures, blocks and timeouts throw an AppError.
 */
export async function guardedRequest(
  rawUrl: string | URL,
  init: GuardedRequestInit,
): Promise<GuardedResponse> {
  const { policy, maxBytes } = init;
  const timeoutMs = init.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRedirects = init.maxRedirects ?? MAX_REDIRECTS;
  let url = checkWebUrl(rawUrl, policy);
  let host = bareHostname(url);
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new AppError("timeout", `Request to ${host} timed out after ${timeoutMs} ms`)),
    timeoutMs,
  );
  const onOuterAbort = () => controller.abort(init.signal?.reason);
  if (init.signal?.aborted) onOuterAbort();
  init.signal?.addEventListener("abort", onOuterAbort, { once: true });
  // Messages name the URL being fetched (the current hop of a redirect chain).
  const lookup = guardedLookup(policy, () => url.href);
  let method = init.method ?? "GET";
  let headers = init.headers ?? {};
  let body = init.body;
  try {
    for (let redirects = 0; ; redirects++) {
      host = bareHostname(url);
      const hop = await requestOnce(url, { method, headers, body, maxBytes }, lookup, controller.signal);
      if (hop.location === undefined) {
        return {
          url: url.href,
          status: hop.status,
          headers: hop.headers,
          body: hop.body,
          truncated: hop.truncated,
        };
      }
      if (redirects >= maxRedirects) {
        throw new AppError("unprocessable", `Too many redirects: stopped after ${maxRedirects}`);
      }
      const next = redirectTarget(hop.location, url, policy);
      if (hop.status === 303 || ((hop.status === 301 || hop.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
      }
      if (next.origin !== url.origin) {
        // Credentials (API key headers) never follow a redirect to another origin, nor does a body.
        headers = {};
        if (body !== undefined) {
          throw new AppError(
            "unprocessable",
            `Refusing to resend the request body to ${next.host} on redirect`,
          );
        }
      }
      url = next;
    }
  } finally {
    clearTimeout(timer);
    init.signal?.removeEventListener("abort", onOuterAbort);
  }
}

function redirectTarget(location: string, base: URL, policy: AddressPolicy): URL {
  let next: URL;
  try {
    next = new URL(location, base);
  } catch {
    throw badRequest(`Invalid redirect location from ${bareHostname(base)}`);
  }
  return checkWebUrl(next, policy);
}

interface HopInit {
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  maxBytes: number;
}

function requestOnce(url: URL, init: HopInit, lookup: LookupFunction, signal: AbortSignal): Promise<Hop> {
  const host = bareHostname(url);
  if (signal.aborted) return Promise.reject(abortError(signal.reason, host));
  return new Promise((resolve, reject) => {
    let settled = false;
    let req: ClientRequest | undefined;
    const finish = (error: unknown, hop?: Hop) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      // agent: false, so this closes the connection: no more body is read than was kept.
      req?.destroy();
      if (hop) resolve(hop);
      else reject(error);
    };
    const onAbort = () => finish(abortError(signal.reason, host));
    const payload =
      init.body === undefined
        ? undefined
        : typeof init.body === "string"
          ? Buffer.from(init.body)
          : init.body;
    req = (url.protocol === "https:" ? httpsRequest : httpRequest)({
      protocol: url.protocol,
      hostname: host,
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: init.method,
      headers: {
        accept: "text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.8",
        "accept-encoding": "identity",
        ...init.headers,
        "user-agent": USER_AGENT,
        ...(payload ? { "content-length": String(payload.length) } : {}),
      },
      agent: false,
      lookup,
    });
    signal.addEventListener("abort", onAbort, { once: true });
    req.on("error", (error) => finish(networkError(error, host)));
    // Without a listener node drops the socket and the request never settles: it would wait out the timeout.
    req.on("upgrade", (_res, socket) => {
      socket.destroy();
      finish(
        new AppError("unprocessable", `${host} answered 101 Switching Protocols to a plain HTTP request`),
      );
    });
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      const headers = res.headers;
      const location = REDIRECT_STATUSES.has(status) ? res.headers.location : undefined;
      if (location !== undefined) {
        finish(undefined, { status, headers, location, body: Buffer.alloc(0), truncated: false });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        if (settled) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size > init.maxBytes) {
          const body = Buffer.concat(chunks).subarray(0, init.maxBytes);
          finish(undefined, { status, headers, body, truncated: true });
        }
      });
      res.on("end", () =>
        finish(undefined, { status, headers, body: Buffer.concat(chunks), truncated: false }),
      );
      res.on("error", (error) => finish(networkError(error, host)));
      res.on("aborted", () =>
        finish(networkError(new Error("connection closed before the body ended"), host)),
      );
    });
    req.end(payload);
  });
}

function abortError(reason: unknown, host: string): AppError {
  return reason instanceof AppError ? reason : new AppError("timeout", `Request to ${host} was aborted`);
}

function networkError(error: unknown, host: string): AppError {
  if (error instanceof AppError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new AppError("unavailable", `Request to ${host} failed: ${message}`, { cause: error });
}
