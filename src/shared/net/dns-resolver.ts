/**
 * Name resolution for hosts someone else named (web fetches, callbacks, MCP servers, sandbox egress).
 *
 * Not `dns.lookup`: that is getaddrinfo on libuv's threadpool, which the service shares with its own
 * name lookups (LLM providers, PostgreSQL), file system work and crypto. A page or a model asking for
 * names whose servers never answer held up to half the pool for the system resolver's whole timeout
 * (10 s here) per name, queueing every other getaddrinfo of the process behind them. Here names go to
 * the DNS servers through c-ares (`Resolver.resolve4/resolve6`: sockets on the event loop, no thread),
 * each lookup has a deadline, and only so many run at once (the rest wait in a bounded queue).
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
import { Resolver as AresResolver } from "node:dns/promises";
import { readFile } from "node:fs/promises";
import { isIPv4, isIPv6 } from "node:net";

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Hostname → addresses; errors carry a `code` (ENOTFOUND, ETIMEOUT, EBUSY, …). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface DnsResolverOptions {
  /** DNS servers (`ip` or `ip:port`). Default: node's, read at each lookup (resolv.conf or dns.setServers). */
  servers?: readonly string[];
  /** The whole lookup, time waiting for a slot included (default 5000 ms). */
  timeoutMs?: number;
  /** Lookups sent to DNS at once, over all callers (default 32). */
  maxConcurrent?: number;
  /** Lookups waiting for a slot; more fail at once with EBUSY (default 256). */
  maxQueued?: number;
  /** The hosts file; null for none (default /etc/hosts, read again after a minute). */
  hostsFile?: string | null;
  /** Where the search list and `ndots` come from; null for none (default /etc/resolv.conf, as above). */
  resolvConf?: string | null;
}

const FILE_TTL_MS = 60_000;

/** A resolver for untrusted names: c-ares, a deadline, bounded concurrency. */
export function createDnsResolver(options: DnsResolverOptions = {}): Resolver {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const slots = new Slots(options.maxConcurrent ?? 32, options.maxQueued ?? 256);
  const hosts =
    options.hostsFile === null ? undefined : new CachedFile(options.hostsFile ?? "/etc/hosts", parseHosts);
  const search =
    options.resolvConf === null
      ? undefined
      : new CachedFile(options.resolvConf ?? "/etc/resolv.conf", parseSearch);
  // The module object, not a named import: dns.setServers replaces its functions, not the import's.
  const servers = () => options.servers ?? dns.getServers();
  return async (hostname) => {
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
    if (listed && listed.length > 0) return listed;
    // A name ending in a dot is absolute: no search domain is tried.
    const candidates = hostname.endsWith(".") ? [name] : searchCandidates(name, await search?.read());
    const deadline = Date.now() + timeoutMs;
    const slot = await slots.acquire(deadline, hostname);
    try {
      // A slot freed in the very moment this lookup's time ran out: not worth a query.
      if (Date.now() >= deadline) throw dnsError("ETIMEOUT", hostname);
      return await queryFirst(slot, candidates, servers(), deadline);
    } finally {
      slots.release(slot);
    }
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
): Promise<ResolvedAddress[]> {
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
): Promise<ResolvedAddress[]> {
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
  const [v4, v6] = await Promise.allSettled([slot.resolver.resolve4(name), slot.resolver.resolve6(name)]);
  clearTimeout(timer);
  const addresses = [
    ...(v4.status === "fulfilled" ? v4.value.map((address) => ({ address, family: 4 })) : []),
    ...(v6.status === "fulfilled" ? v6.value.map((address) => ({ address, family: 6 })) : []),
  ];
  if (addresses.length > 0) return addresses;
  if (timedOut) throw dnsError("ETIMEOUT", name);
  const codes = [v4, v6].map((each) =>
    each.status === "rejected" ? String((each.reason as NodeJS.ErrnoException).code) : "ENODATA",
  );
  // No such name, or no address records of either family: not found. Else the failure (ESERVFAIL, …).
  const failure = codes.find((code) => code !== "ENOTFOUND" && code !== "ENODATA");
  throw dnsError(failure ?? "ENOTFOUND", name);
}

function dnsError(code: string, hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code} ${hostname}`), { code, hostname });
}

interface Slot {
  resolver: AresResolver;
  servers: string;
}

/**
 * At most `size` lookups in flight, each on a c-ares channel of its own (so that cancelling one lookup
 * at its deadline cancels nothing else); waiting lookups in order, each failing at its deadline.
 */
class Slots {
  private readonly idle: Slot[] = [];
  private busy = 0;
  private readonly waiting: Array<{ grant: (slot: Slot) => void; timer: NodeJS.Timeout }> = [];
  private readonly size: number;
  private readonly maxQueued: number;

  constructor(size: number, maxQueued: number) {
    this.size = size;
    this.maxQueued = maxQueued;
  }

  acquire(deadline: number, hostname: string): Promise<Slot> {
    if (this.busy < this.size) {
      this.busy++;
      return Promise.resolve(this.idle.pop() ?? newSlot());
    }
    if (this.waiting.length >= this.maxQueued) return Promise.reject(dnsError("EBUSY", hostname));
    return new Promise((resolve, reject) => {
      const entry = {
        grant: (slot: Slot) => {
          clearTimeout(entry.timer);
          resolve(slot);
        },
        timer: setTimeout(
          () => {
            this.waiting.splice(this.waiting.indexOf(entry), 1);
            reject(dnsError("ETIMEOUT", hostname));
          },
          Math.max(0, deadline - Date.now()),
        ),
      };
      this.waiting.push(entry);
    });
  }

  release(slot: Slot): void {
    const next = this.waiting.shift();
    if (next) next.grant(slot);
    else {
      this.busy--;
      this.idle.push(slot);
    }
  }
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

/** Per attempt 1.5 s, 3 attempts: c-ares gives up near the default deadline on its own, too. */
function newSlot(): Slot {
  return { resolver: new AresResolver({ timeout: 1500, tries: 3 }), servers: "" };
}
