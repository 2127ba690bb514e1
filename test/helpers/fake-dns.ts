import type { NetworkPolicy } from "../../src/shared/net/guarded-request.ts";

/**
 * The SSRF rule as in production (no private network) with a resolver that knows only `names`, and
 * the exact addresses in `exempt` let through: test hosts on this machine's loopback standing in for
 * public ones. An unknown name fails as the system resolver would (ENOTFOUND).
 */
export function fakeDnsPolicy(
  names: Record<string, string>,
  exempt: string[] = ["127.0.0.2"],
): NetworkPolicy {
  return {
    allowPrivateNetwork: false,
    allowedAddresses: new Set(exempt),
    resolve: async (hostname) => {
      const address = names[hostname];
      if (!address) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
      return [{ address, family: 4 }];
    },
  };
}
