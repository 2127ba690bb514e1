import { connect } from "node:net";
import { isAppError } from "../../../shared/errors.ts";
import { guardedLookup, type NetworkPolicy } from "../../../shared/net/guarded-request.ts";
import { checkWebUrl, isIpLiteral } from "../../../shared/net/ssrf.ts";

/**
 * A real TCP connection attempt: reachable only when the handshake completes. Addresses are checked by
 * the SSRF rule (a blocked one is an error, not "unreachable"), and failures are reported as they are.
 */
export async function checkConnectivity(
  { host, port, timeoutMs }: { host: string; port: number; timeoutMs: number },
  policy: NetworkPolicy,
): Promise<{
  host: string;
  port: number;
  reachable: boolean;
  address: string | null;
  latencyMs: number | null;
  error: string | null;
}> {
  const bare = host.replace(/^\[|\]$/g, "");
  const url = checkWebUrl(
    `http://${isIpLiteral(bare) && bare.includes(":") ? `[${bare}]` : bare}:${port}/`,
    policy,
  );
  const lookup = guardedLookup(policy, () => url.href);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect({ host: bare, port, lookup, timeout: timeoutMs });
    const finish = (error: Error | null) => {
      const address = socket.remoteAddress ?? null;
      socket.destroy();
      if (error && isAppError(error) && error.code === "validation") return reject(error);
      resolve({
        host,
        port,
        reachable: error === null,
        address,
        latencyMs: error === null ? Math.round(performance.now() - started) : null,
        error: error?.message ?? null,
      });
    };
    socket.once("connect", () => finish(null));
    socket.once("timeout", () => finish(new Error(`no answer within ${timeoutMs} ms`)));
    socket.once("error", (error) => finish(error));
  });
}
