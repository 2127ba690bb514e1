import { ipv6Groups } from "../shared/net/ssrf.ts";

/**
 * The client an address stands for when requests are counted (rate limits, requests in flight): an IPv4
 * address as it is, an IPv6 one by its /64. One subscriber, one host even, is routinely handed a whole
 * /64, so counting single IPv6 addresses gave whoever holds one 2^64 separate budgets. An IPv4 address
 * written as IPv6 (`::ffff:192.0.2.1`) is that IPv4 address.
 */
export function clientOf(address: string): string {
  if (!address.includes(":")) return address;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high, low] = [groups[6] as number, groups[7] as number];
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(":")}::/64`;
}
