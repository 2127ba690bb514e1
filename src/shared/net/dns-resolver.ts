/**
 * Name resolution for hosts someone else named (web fetches, callbacks, MCP servers, sandbox egress).
 *
 * Not `dns.lookup`: that is getaddrinfo on libuv's threadpool, which the service shares with its own
 * name lookups (LLM providers, PostgreSQL), file system work and crypto. A page or a model asking for
 * names whose servers never answer held up to half the pool for the system resolver's whole timeout
 * (10 s here) per name, queueing every other getaddrinfo of the process behind them. Here names go to
 * the DNS servers through c-ares (`Resolver.resolve4/resolve6`: sockets on the event loop, no thread),
 * each lookup has a deadline, and only so many run at once (the rest wait in a bounded queue), one
 * realm at most its share of them (./dns-slots.ts). Answers are kept for their TTL (./dns-cache.ts).
 *
 * Outside DNS, as getaddrinfo would answer: IP literals are themselves; `localhost` and `*.localhost`
 * are loopback (RFC 6761), never asked of a DNS server, so the SSRF rule refuses them; a name in the
 * hosts file (`/etc/hosts`, the operator's own configuration) gets the addresses listed there. Every
 * answer, whichever the source, is then checked by the SSRF rule like any other. The resolv.conf
 * search list applies as getaddrinfo applies it (a name with fewer dots than `ndots` is tried with each
 * search domain first), so an operator's cluster-internal names (an MCP server `mcp-github` in
 * Kubernetes) still resolve. mDNS (`.local`) is not consulted.
 */
import dns from "node:dns";
import { readFile } from "node:fs/promises";
import { isIPv4, isIPv6 } from "node:net";
import type { DnsCaller, ResolvedAddress, Resolver } from "./dns-answer.ts";
import { DnsCache } from "./dns-cache.ts";
import { dnsError, type Slot, Slots } from "./dns-slots.ts";

export type { DnsCaller, ResolvedAddress, Resolver };

export interface DnsResolverOptions {
  /** DNS servers (`ip` or `ip:port`). Default: node's, read at each lookup (resolv.conf or dns.setServers). */
  servers?: readonly string[];
  /** The whole lookup, time waiting for a slot included (default 5000 ms). */
  timeoutMs?: number;
  /** Lookups sent to DNS at once, over all callers (default 32). */
  maxConcurrent?: number;
  /** Lookups waiting for a slot; more fail at once with EBUSY (default 256). */
  maxQueued?: number;
  /** Lookups one realm (or the service) has sent at once; its others wait (default 8). */
  maxConcurrentPerRealm?: number;
  /** Lookups one realm (or the service) has waiting; more fail at once with EBUSY (default 64). */
  maxQueuedPerRealm?: number;
  /** Names whose answers are kept (default 1000, 0 for none). */
  cacheSize?: number;
  /** The longest an answer is kept, whatever its DNS TTL (default 60000 ms). */
  maxTtlMs?: number;
  /** How long "no such name" is kept (default 5000 ms). */
  negativeTtlMs?: number;
  /** Tests: the clock answers are kept by (default Date.now). */
  now?: () => number;
  /** The hosts file; null for none (default /etc/hosts, read again after a minute). */
  hostsFile?: string | null;
  /** Where the search list and `ndots` come from; null for none (default /etc/resolv.conf, as above). */
  resolvConf?: string | null;
}

const FILE_TTL_MS = 60_000;

interface Answer {
  addresses: ResolvedAddress[];
  /** The smallest TTL of the records, in seconds. */
  ttl: number;
}

/**
 * A resolver for untrusted names: c-ares, a deadline, bounded concurrency shared fairly between
 * realms, identical lookups of one caller merged, answers kept for their TTL.
 */
export function createDnsResolver(options: DnsResolverOptions = {}): Resolver {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxQueued = options.maxQueued ?? 256;
  const slots = new Slots({
    size: options.maxConcurrent ?? 32,
    maxQueued,
    perCaller: options.maxConcurrentPerRealm ?? 8,
    perCallerQueued: options.maxQueuedPerRealm ?? 64,
  });
  const cache = new DnsCache({
    maxNames: options.cacheSize ?? 1000,
    maxTtlMs: options.maxTtlMs ?? 60_000,
    negativeTtlMs: options.negativeTtlMs ?? 5_000,
    now: options.now ?? Date.now,
  });
  // Merged per caller, not across realms: joining another realm's lookup that still waits behind that
  // realm's own flood would make this realm wait for it too. Their answers are shared through the cache.
  const inFlight = new Map<string, Promise<Answer>>();
  const hosts =
    options.hostsFile === null ? undefined : new CachedFile(options.hostsFile ?? "/etc/hosts", parseHosts);
  const search =
    options.resolvConf === null
      ? undefined
      : new CachedFile(options.resolvConf ?? "/etc/resolv.conf", parseSearch);
  // The module object, not a named import: dns.setServers replaces its functions, not the import's.
  const servers = () => options.servers ?? dns.getServers();

  const lookup = async (
    caller: string,
    hostname: string,
    candidates: readonly string[],
    asked: readonly string[],
  ): Promise<Answer> => {
    const deadline = Date.now() + timeoutMs;
    const slot = await slots.acquire(caller, deadline, hostname);
    try {
      // A slot freed in the very moment this lookup's time ran out: not worth a query.
      if (Date.now() >= deadline) throw dnsError("ETIMEOUT", hostname);
      return await queryFirst(slot, candidates, asked, deadline);
    } finally {
      slots.release(caller, slot);
    }
  };

  return async (hostname, from) => {
    const name = hostname.toLowerCase().replace(/\.$/, "");
    if (isIPv4(name)) return [{ address: name, family: 4 }];
    if (isIPv6(name)) return [{ address: name, family: 6 }];
    if (name === "localhost" || name.endsWith(".localhost")) {
      return [
        { address: "127.0.0.1", family: 4 },
        { address: "::1", family: 6 },
      ];
    }
    const listed = (await hosts?.read())?.get(name);
    if (listed && listed.length > 0) return listed.map(({ address, family }) => ({ address, family }));
    // A name ending in a dot is absolute: no search domain is tried.
    const absolute = hostname.endsWith(".");
    const candidates = absolute ? [name] : searchCandidates(name, await search?.read());
    const asked = servers();
    const key = `${asked.join(",")} ${candidates.join(" ")}`;
    const cached = cache.get(key);
    if (cached === "notFound") throw dnsError("ENOTFOUND", hostname);
    if (cached) return cached;
    // As messages name it; no realm id can be taken for the service's own calls.
    const caller = from?.realm === undefined ? "the service" : `realm ${from.realm}`;
    const flightKey = `${caller}\u0000${key}`;
    let flight = inFlight.get(flightKey);
    if (!flight) {
      flight = lookup(caller, hostname, candidates, asked).then(
        (answer) => {
          cache.found(key, answer.addresses, answer.ttl);
          return answer;
        },
        (error: NodeJS.ErrnoException) => {
          if (error.code === "ENOTFOUND") cache.notFound(key);
          throw error;
        },
      );
      const made = flight;
      inFlight.set(flightKey, made);
      made.then(
        () => inFlight.delete(flightKey),
        () => inFlight.delete(flightKey),
      );
    }
    const { addresses } = await flight;
    // Each caller its own copy: whoever changes its list changes no one else's.
    return addresses.map(({ address, family }) => ({ address, family }));
  };
}

/**
 * The candidates in order until one has addresses; a name that does not exist (or has no addresses)
 * moves on to the next, any other failure (a timeout, a server failure) ends the lookup.
 */
async function queryFirst(
  slot: Slot,
  candidates: readonly string[],
  servers: readonly string[],
  deadline: number,
): Promise<Answer> {
  let last: unknown;
  for (const name of candidates) {
    try {
      return await query(slot, name, servers, deadline);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOTFOUND") throw error;
      last = error;
    }
  }
  throw last;
}

/** A and AAAA at once on this slot's channel; the deadline cancels both (the slot is then free again). */
async function query(
  slot: Slot,
  name: string,
  servers: readonly string[],
  deadline: number,
): Promise<Answer> {
  if (slot.servers !== servers.join(",")) {
    slot.resolver.setServers([...servers]);
    slot.servers = servers.join(",");
  }
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      slot.resolver.cancel();
    },
    Math.max(0, deadline - Date.now()),
  );
  const [v4, v6] = await Promise.allSettled([
    slot.resolver.resolve4(name, { ttl: true }),
    slot.resolver.resolve6(name, { ttl: true }),
  ]);
  clearTimeout(timer);
  const records = [
    ...(v4.status === "fulfilled" ? v4.value.map((record) => ({ ...record, family: 4 })) : []),
    ...(v6.status === "fulfilled" ? v6.value.map((record) => ({ ...record, family: 6 })) : []),
  ];
  if (records.length > 0) {
    // A family that failed (not merely absent) is not kept: the next lookup asks again.
    const partial = [v4, v6].some((each) => each.status === "rejected" && !isAbsent(each.reason));
    return {
      addresses: records.map(({ address, family }) => ({ address, family })),
      ttl: partial ? 0 : Math.min(...records.map((record) => record.ttl)),
    };
  }
  if (timedOut) throw dnsError("ETIMEOUT", name);
  const codes = [v4, v6].map((each) =>
    each.status === "rejected" ? String((each.reason as NodeJS.ErrnoException).code) : "ENODATA",
  );
  // No such name, or no address records of either family: not found. Else the failure (ESERVFAIL, …).
  const failure = codes.find((code) => code !== "ENOTFOUND" && code !== "ENODATA");
  throw dnsError(failure ?? "ENOTFOUND", name);
}

function isAbsent(reason: unknown): boolean {
  const code = (reason as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOTFOUND" || code === "ENODATA";
}

/** A configuration file, parsed, read again after a minute; one that cannot be read counts as empty. */
class CachedFile<T> {
  private loaded: Promise<T> | undefined;
  private loadedAt = 0;
  private readonly path: string;
  private readonly parse: (text: string) => T;

  constructor(path: string, parse: (text: string) => T) {
    this.path = path;
    this.parse = parse;
  }

  read(): Promise<T> {
    if (!this.loaded || Date.now() - this.loadedAt > FILE_TTL_MS) {
      this.loadedAt = Date.now();
      this.loaded = readFile(this.path, "utf8").then(this.parse, () => this.parse(""));
    }
    return this.loaded;
  }
}

export interface SearchList {
  domains: string[];
  ndots: number;
}

/** `search` (or `domain`) and `options ndots:N` of resolv.conf; the last line of each kind wins. */
export function parseSearch(text: string): SearchList {
  const list: SearchList = { domains: [], ndots: 1 };
  for (const line of text.split("\n")) {
    const [keyword, ...values] = line
      .replace(/[#;].*/, "")
      .trim()
      .split(/\s+/);
    if (keyword === "search" || keyword === "domain") {
      list.domains = values.map((value) => value.toLowerCase().replace(/\.$/, "")).filter(Boolean);
    } else if (keyword === "options") {
      const ndots = values.find((value) => value.startsWith("ndots:"));
      if (ndots) list.ndots = Math.min(15, Number.parseInt(ndots.slice(6), 10) || 0);
    }
  }
  list.domains = list.domains.slice(0, 6);
  return list;
}

/** The names to ask, in getaddrinfo's order: with the search domains first when `name` has few dots. */
export function searchCandidates(name: string, search: SearchList | undefined): string[] {
  if (!search || search.domains.length === 0) return [name];
  const searched = search.domains.map((domain) => `${name}.${domain}`);
  const dots = name.split(".").length - 1;
  return dots >= search.ndots ? [name, ...searched] : [...searched, name];
}

export function parseHosts(text: string): Map<string, ResolvedAddress[]> {
  const names = new Map<string, ResolvedAddress[]>();
  for (const line of text.split("\n")) {
    const [address, ...aliases] = line.replace(/#.*/, "").trim().split(/\s+/);
    const family = address && isIPv4(address) ? 4 : address && isIPv6(address) ? 6 : 0;
    if (!address || family === 0) continue;
    for (const alias of aliases) {
      const key = alias.toLowerCase().replace(/\.$/, "");
      const list = names.get(key) ?? [];
      if (!list.some((each) => each.address === address)) list.push({ address, family });
      names.set(key, list);
    }
  }
  return names;
}
