import { isIPv4, isIPv6 } from "node:net";
import { networkInterfaces } from "node:os";
import { type AppError, badRequest } from "../../shared/errors.ts";

/**
 * SSRF guard: which addresses a web tool may connect to, and which URLs it may ask for.
 * The address check runs on the address the socket actually connects to (see ./guarded-request.ts), never on a
 * separate earlier resolution, so DNS rebinding cannot slip a private address past it.
 */

/** The specification's message for a URL of another scheme: `Protocol not allowed: <protocol>`. */
export function protocolNotAllowed(protocol: string): string {
  return `Protocol not allowed: ${protocol.replace(/:$/, "")}`;
}

/** How a URL's host may be reached. `allowedAddresses` are exact IPs exempt from the block (tests). */
export interface AddressPolicy {
  allowPrivateNetwork: boolean;
  allowedAddresses?: ReadonlySet<string>;
}

interface V4Range {
  base: number;
  bits: number;
  category: string;
}

const v4 = (cidr: string, category: string): V4Range => {
  const [address, bits] = cidr.split("/");
  return { base: ipv4ToInt(ipv4Bytes(address) as number[]), bits: Number(bits), category };
};

/** Blocked IPv4 ranges. Documentation nets (192.0.2/24, 198.51.100/24, 203.0.113/24) stay allowed. */
const BLOCKED_V4: readonly V4Range[] = [
  v4("0.0.0.0/8", "this-network"),
  v4("10.0.0.0/8", "private"),
  v4("100.64.0.0/10", "carrier-grade NAT"),
  v4("127.0.0.0/8", "loopback"),
  v4("169.254.0.0/16", "link-local"),
  v4("172.16.0.0/12", "private"),
  // Not globally reachable (RFC 6890); Oracle Cloud serves instance metadata at 192.0.0.192.
  v4("192.0.0.0/24", "IETF protocol assignments"),
  v4("192.168.0.0/16", "private"),
  v4("198.18.0.0/15", "benchmarking"),
  v4("224.0.0.0/4", "multicast"),
  v4("240.0.0.0/4", "reserved"),
];

/** Strict dotted quad (what resolvers and the WHATWG URL parser produce), else undefined. */
function ipv4Bytes(text: string): number[] | undefined {
  if (!isIPv4(text)) return undefined;
  return text.split(".").map(Number);
}

function ipv4ToInt(bytes: readonly number[]): number {
  return ((bytes[0] << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3]) >>> 0;
}

function classifyIPv4(value: number): string | undefined {
  for (const range of BLOCKED_V4) {
    const mask = range.bits === 0 ? 0 : (0xffffffff << (32 - range.bits)) >>> 0;
    if ((value & mask) >>> 0 === range.base) return range.category;
  }
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped, embedded dotted quad expanded). */
export function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  if (!isIPv6(text)) return undefined;
  const lastColon = text.lastIndexOf(":");
  const quad = ipv4Bytes(text.slice(lastColon + 1));
  if (quad) {
    const high = ((quad[0] << 8) | quad[1]).toString(16);
    const low = ((quad[2] << 8) | quad[3]).toString(16);
    text = `${text.slice(0, lastColon + 1)}${high}:${low}`;
  }
  const halves = text.split("::");
  const part = (half: string | undefined) =>
    half ? half.split(":").map((group) => parseInt(group, 16)) : [];
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const groups =
    halves.length === 2 ? [...head, ...Array(8 - head.length - tail.length).fill(0), ...tail] : head;
  return groups.length === 8 && groups.every((group) => group >= 0 && group <= 0xffff) ? groups : undefined;
}

function classifyIPv6(groups: readonly number[]): string | undefined {
  const embedded = (high: number, low: number) => ((high << 16) | low) >>> 0;
  const zeros = (count: number) => groups.slice(0, count).every((group) => group === 0);
  if (zeros(8)) return "unspecified";
  if (zeros(7) && groups[7] === 1) return "loopback";
  // ::ffff:a.b.c.d (IPv4-mapped) and the deprecated ::a.b.c.d (IPv4-compatible) reach the IPv4 address.
  if (zeros(5) && (groups[5] === 0xffff || groups[5] === 0))
    return classifyIPv4(embedded(groups[6], groups[7]));
  // 64:ff9b::/96 (NAT64) and 2002::/16 (6to4) carry an IPv4 address too.
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) {
    return classifyIPv4(embedded(groups[6], groups[7]));
  }
  if (groups[0] === 0x2002) return classifyIPv4(embedded(groups[1], groups[2]));
  if ((groups[0] & 0xfe00) === 0xfc00) return "unique-local";
  if ((groups[0] & 0xffc0) === 0xfe80) return "link-local";
  if ((groups[0] & 0xffc0) === 0xfec0) return "site-local";
  if ((groups[0] & 0xff00) === 0xff00) return "multicast";
  return undefined;
}

/**
 * Why an address is blocked ("loopback", "private", "link-local", …), or undefined when it is a public
 * address. Anything that is not an IP address is blocked ("not an IP address"): fail closed.
 */
export function blockedCategory(address: string): string | undefined {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const quad = ipv4Bytes(bare);
  if (quad) return classifyIPv4(ipv4ToInt(quad));
  const groups = ipv6Groups(bare);
  if (groups) return classifyIPv6(groups);
  return "not an IP address";
}

export function isBlockedAddress(address: string): boolean {
  return blockedCategory(address) !== undefined;
}

/** The specification's message: `SSRF protection: <url> resolves to blocked IP <address>`. */
export function blockedAddressError(address: string, url: string): AppError {
  return badRequest(`SSRF protection: ${url} resolves to blocked IP ${address}`);
}

/** Throws the blocked-address error unless the policy lets this address through; `url` names the target. */
export function assertAddressAllowed(address: string, url: string, policy: AddressPolicy): void {
  if (policy.allowPrivateNetwork) return;
  if (policy.allowedAddresses?.has(address.toLowerCase())) return;
  if (isBlockedAddress(address) || isOwnAddress(address)) throw blockedAddressError(address, url);
}

/**
 * Whether `address` is one of this machine's own, on any interface as the kernel lists them now: a
 * service listening on every interface answers there as it does on loopback, whatever range the address
 * is in (a server's public one).
 */
export function isOwnAddress(address: string): boolean {
  const wanted = canonicalAddress(address);
  if (wanted === undefined) return false;
  return Object.values(networkInterfaces()).some((addresses) =>
    addresses?.some((each) => canonicalAddress(each.address) === wanted),
  );
}

/** One spelling per address: IPv4 dotted, an IPv4-mapped (or -compatible) IPv6 one as its IPv4, other IPv6 as groups. */
function canonicalAddress(address: string): string | undefined {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (ipv4Bytes(bare)) return bare;
  const groups = ipv6Groups(bare);
  if (!groups) return undefined;
  const [, , , , , marker = -1, high = 0, low = 0] = groups;
  if (groups.slice(0, 5).every((group) => group === 0) && (marker === 0xffff || marker === 0)) {
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
  }
  return groups.join(":");
}

/** The hostname without IPv6 brackets: what a socket connects to or a resolver resolves. */
export function bareHostname(url: URL): string {
  const host = url.hostname;
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** The host is an IP literal (after WHATWG normalisation: `2130706433`, `0x7f.1` become `127.0.0.1`). */
export function isIpLiteral(host: string): boolean {
  return isIPv4(host) || isIPv6(host);
}

/** Parses and checks the scheme; never throws anything but an AppError. */
export function parseWebUrl(raw: string | URL): URL {
  let url: URL;
  try {
    url = typeof raw === "string" ? new URL(raw) : new URL(raw.href);
  } catch {
    const text = String(raw);
    throw badRequest(`Invalid URL: ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw badRequest(protocolNotAllowed(url.protocol));
  if (url.hostname === "") throw badRequest(`Invalid URL: ${url.href}`);
  return url;
}

/**
 * The check every web tool (and callback URL) applies before connecting: http(s) only, and a literal IP
 * host must not be blocked. Hostnames are checked at connect time by the guarded lookup (./guarded-request.ts).
 */
export function checkWebUrl(raw: string | URL, policy: AddressPolicy): URL {
  const url = parseWebUrl(raw);
  const host = bareHostname(url);
  if (isIpLiteral(host)) assertAddressAllowed(host, url.href, policy);
  return url;
}
