import { GuardProxy } from "../../../shared/net/guard-proxy.ts";
import type { NetworkPolicy } from "../../../shared/net/guarded-request.ts";

/**
 * The browser's only way out: one guarding proxy per network policy (the service has one; tests may
 * have several). Chromium is pointed at it, so the SSRF rule applies to every connection a page opens.
 */
const proxies = new WeakMap<NetworkPolicy, GuardProxy>();
export function proxyFor(policy: NetworkPolicy): GuardProxy {
  let proxy = proxies.get(policy);
  if (!proxy) {
    proxy = new GuardProxy(policy);
    proxies.set(policy, proxy);
  }
  return proxy;
}
