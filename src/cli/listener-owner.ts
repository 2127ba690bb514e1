import { readFileSync } from "node:fs";
import { networkInterfaces } from "node:os";

/** The kernel's socket tables (Linux): one line per socket, with its state and its owner's uid. */
const SOCKET_TABLES = ["/proc/net/tcp", "/proc/net/tcp6"];
const LISTEN = "0A";

/** The uids of whatever listens on TCP `port` on this host; none where the tables cannot be read. */
export function listenerUids(port: number): number[] {
  const uids = new Set<number>();
  for (const table of SOCKET_TABLES) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid …; the address ends in ":<hex port>".
      const [, local, , state, , , , uid] = line.trim().split(/\s+/);
      if (state !== LISTEN || !local || uid === undefined) continue;
      if (Number.parseInt(local.slice(local.lastIndexOf(":") + 1), 16) === port) uids.add(Number(uid));
    }
  }
  return [...uids];
}

/** Whether `url` names this host (where who listens on its port can be known): loopback, any, or an own address. */
export function isLocalUrl(url: URL): boolean {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "localhost" || host === "0.0.0.0" || host === "::" || host === "::1") return true;
  if (/^127\.\d+\.\d+\.\d+$/.test(host)) return true;
  return Object.values(networkInterfaces()).some((addresses) =>
    addresses?.some((entry) => entry.address === host),
  );
}

/** The port a URL connects to. */
export function urlPort(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}
