import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { GuardProxy } from "../../net/guard-proxy.ts";
import type { NetworkPolicy } from "../../net/guarded-request.ts";
import { INSIDE, RELAY_PORT } from "./bwrap.ts";

/** The socket's name inside each key's directory (the launcher binds the directory at /run/agentos). */
export const SOCKET_NAME = "proxy.sock";

const SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/**
 * Connections one agent's programs may hold through its proxy at once: each takes descriptors of the
 * service (two for a tunnel), and unbounded, one program's thousands of sockets would use up the
 * service's own. A package manager's parallel downloads stay far below it.
 */
const MAX_CONNECTIONS = 256;

/**
 * What a program granted egress is told: its proxy is the relay on the sandbox's own loopback, and Node
 * trusts the system's certificate authorities as well as its own (as curl, Python and git do).
 */
export const PROXY_ENV: Record<string, string> = {
  ...Object.fromEntries(
    ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"].map((name) => [
      name,
      `http://127.0.0.1:${RELAY_PORT}`,
    ]),
  ),
  ...(existsSync(SYSTEM_CA_BUNDLE) ? { NODE_EXTRA_CA_CERTS: SYSTEM_CA_BUNDLE } : {}),
};

let relayScript: Buffer | undefined;
/** The relay's source, read once (bound into each sandbox granted egress). */
export function relayScriptSource(): Buffer {
  relayScript ??= readFileSync(new URL("./egress-relay.mjs", import.meta.url));
  return relayScript;
}

/** `command` run behind the relay, which listens on the sandbox's loopback and forwards to the socket. */
export function relayed(command: string[], node: string): string[] {
  return [node, INSIDE.relay, `${INSIDE.run}/${SOCKET_NAME}`, String(RELAY_PORT), "--", ...command];
}

interface Gate {
  /** The allowlist it was made for, as a comparable string. */
  allow: string;
  proxy: Promise<GuardProxy>;
}

/**
 * The way out for sandboxes whose agent is granted egress: a guarding proxy per key (an agent), on a unix
 * socket the sandbox gets bound in, since it has no network of its own. Every connection through it is
 * held to the SSRF rule and, when the agent has one, to its domain allowlist.
 */
export class EgressGate {
  private readonly policy: NetworkPolicy;
  private readonly dir: string;
  private readonly gates = new Map<string, Gate>();

  constructor(policy: NetworkPolicy, dir: string) {
    this.policy = policy;
    this.dir = dir;
  }

  /**
   * The directory holding `proxy.sock` for `key`, its proxy listening (and re-made when the allowlist
   * differs from the last call's, which ends the connections made under the old one).
   */
  async socketDir(key: string, allowDomains: readonly string[] | null): Promise<string> {
    const dir = join(this.dir, safeName(key));
    const allow = JSON.stringify(allowDomains ? [...allowDomains].sort() : null);
    let gate = this.gates.get(key);
    if (gate?.allow !== allow) {
      // The key is `<realm>/<agent>` (egressGrant): its programs' lookups count against the realm's share.
      const policy = { ...this.policy, realm: key.split("/")[0] };
      const made: Gate = { allow, proxy: this.start(policy, dir, allowDomains, gate?.proxy) };
      this.gates.set(key, made);
      // A proxy that failed to start is not kept: the next call tries again.
      made.proxy.catch(() => this.gates.get(key) === made && this.gates.delete(key));
      gate = made;
    }
    await gate.proxy;
    return dir;
  }

  /** Closes every proxy (ending their connections) and removes the socket files. */
  async close(): Promise<void> {
    const gates = [...this.gates.values()];
    this.gates.clear();
    await Promise.all(
      gates.map((gate) =>
        gate.proxy.then(
          (proxy) => proxy.close(),
          () => undefined,
        ),
      ),
    );
  }

  private async start(
    policy: NetworkPolicy,
    dir: string,
    allowDomains: readonly string[] | null,
    previous: Promise<GuardProxy> | undefined,
  ): Promise<GuardProxy> {
    // The old proxy lets go of the socket path before the new one takes it.
    await previous?.then(
      (proxy) => proxy.close(),
      () => undefined,
    );
    // Others may pass through the gate's directory but not list which agents have a way out.
    await makeDir(this.dir, 0o711);
    await makeDir(dir, 0o755);
    const proxy = new GuardProxy(policy, {
      allowDomains,
      explainRefusals: true,
      maxConnections: MAX_CONNECTIONS,
    });
    await proxy.listenUnix(join(dir, SOCKET_NAME));
    return proxy;
  }
}

/** Created if missing, and the mode set either way (mkdir's is cut by the umask). */
async function makeDir(path: string, mode: number): Promise<void> {
  await mkdir(path, { recursive: true, mode });
  await chmod(path, mode);
}

/** Any key becomes a short, fixed-length directory name (a unix socket's path must stay under 108 bytes). */
function safeName(key: string): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 24);
}
