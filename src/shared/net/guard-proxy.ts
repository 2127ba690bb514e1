import { chmod, rm } from "node:fs/promises";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { connect, isIPv4, isIPv6, type Socket } from "node:net";
import { domainToASCII } from "node:url";
import { badRequest, forbidden, isAppError } from "../errors.ts";
import { guardedLookup, type NetworkPolicy } from "./guarded-request.ts";
import { bareHostname, checkWebUrl, parseWebUrl } from "./ssrf.ts";

export interface GuardProxyOptions {
  /**
   * Host names this proxy may reach, each with its subdomains (`example.com` allows `api.example.com`);
   * an IP literal only when listed as such. Null or absent: any host the SSRF rule allows.
   */
  allowDomains?: readonly string[] | null;
  /**
   * Answer a refused plain-HTTP request with a 403 naming the reason. Off for the browser, whose page
   * should see a network error rather than a response it could mistake for the site's; on for programs,
   * whose users need to know why.
   */
  explainRefusals?: boolean;
  /** Client connections open at once; more are closed as they come (each holds descriptors of the service). */
  maxConnections?: number;
}

/**
 * An HTTP proxy that applies the SSRF rule to every connection through it: the browser's only way out
 * (navigations, each redirect hop, subresources, WebSockets), and a sandbox's when its agent is granted
 * egress. Names are resolved here and the socket goes to exactly the address that was checked, so a
 * rebinding DNS answer cannot slip a private address in between check and connect.
 */
export class GuardProxy {
  private readonly server: Server;
  private readonly policy: NetworkPolicy;
  private readonly allowDomains: string[] | null;
  private readonly explainRefusals: boolean;
  /** Every client connection, tunnels included, so that closing the proxy ends them too. */
  private readonly clients = new Set<Socket>();
  /** The rule's messages for connections refused lately, newest last (for error messages). */
  readonly refused: string[] = [];
  private ready: Promise<string> | undefined;
  private socketPath: string | undefined;

  constructor(policy: NetworkPolicy, options: GuardProxyOptions = {}) {
    this.policy = policy;
    this.allowDomains = options.allowDomains ? options.allowDomains.map(normalizeHost) : null;
    this.explainRefusals = options.explainRefusals ?? false;
    this.server = createServer((req, res) => this.forward(req.url ?? "", req, res));
    if (options.maxConnections !== undefined) this.server.maxConnections = options.maxConnections;
    this.server.on("connect", (req, client: Socket, head: Buffer) =>
      this.tunnel(req.url ?? "", client, head),
    );
    this.server.on("connection", (socket: Socket) => {
      this.clients.add(socket);
      socket.once("close", () => this.clients.delete(socket));
    });
  }

  /** The proxy's address (`http://127.0.0.1:port`), listening on TCP from the first call on. */
  address(): Promise<string> {
    this.ready ??= this.listen((done) => this.server.listen(0, "127.0.0.1", done)).then(() => {
      const address = this.server.address();
      return `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    });
    return this.ready;
  }

  /** Listens on a unix socket at `path` instead (a stale file there is replaced); answers the path. */
  listenUnix(path: string): Promise<string> {
    this.ready ??= (async () => {
      await rm(path, { force: true });
      await this.listen((done) => this.server.listen(path, done));
      this.socketPath = path;
      // A sandbox's programs run under a uid of their own and must be able to connect.
      await chmod(path, 0o666);
      return path;
    })();
    return this.ready;
  }

  /** Stops listening, ends every connection (open tunnels included) and removes the socket file. */
  async close(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.clients) socket.destroy();
    await closed;
    if (this.socketPath) await rm(this.socketPath, { force: true });
  }

  private listen(start: (done: () => void) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      start(() => {
        this.server.off("error", reject);
        // A proxy serves whoever uses it; it is no reason for the service to keep running.
        this.server.unref();
        resolve();
      });
    });
  }

  private forward(target: string, req: IncomingMessage, res: ServerResponse): void {
    let url: URL;
    try {
      url = this.check(target);
    } catch (error) {
      this.answerRefusal(error, target, res);
      return;
    }
    const upstream = httpRequest(
      {
        host: bareHostname(url),
        port: url.port || 80,
        path: `${url.pathname}${url.search}`,
        method: req.method,
        headers: req.headers,
        lookup: guardedLookup(this.policy, () => url.href),
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", (error) => {
      if (isAppError(error) || res.headersSent) this.answerRefusal(error, target, res);
      else res.writeHead(502, { "content-type": "text/plain" }).end(String(error.message));
    });
    // A client gone before the answer was through (a closed page, the proxy closing) ends the upstream
    // request too: a site that never answers would otherwise hold a socket of the service for good.
    res.once("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  private tunnel(authority: string, client: Socket, head: Buffer): void {
    const [host = "", port = "443"] = splitHostPort(authority);
    const href = `https://${host.includes(":") ? `[${host}]` : host}:${port}/`;
    client.on("error", () => undefined);
    // The rule's refusals are 403s, failures to reach the host 502s; either way with the reason.
    const refuse = (error: unknown) => {
      const body = `${this.refuse(error, href)}\n`;
      const status = isRefusal(error) ? "403 Forbidden" : "502 Bad Gateway";
      const headers = `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}`;
      client.end(`HTTP/1.1 ${status}\r\n${headers}\r\n\r\n${body}`);
    };
    let checked: URL;
    try {
      checked = this.check(href);
      // The authority must be the host and port the rule checked, as the URL parser reads them: one
      // like "api.example.com/.attacker.net:443" passes an example.com allowlist as text, names
      // another host, and its port would be read as part of a path.
      const same = normalizeHost(bareHostname(checked)) === normalizeHost(host);
      if (!same || Number(checked.port || 443) !== Number(port)) {
        throw badRequest(`CONNECT ${authority}: not a host:port`);
      }
    } catch (error) {
      refuse(error);
      return;
    }
    const upstream = connect({
      host: bareHostname(checked),
      port: Number(port),
      lookup: guardedLookup(this.policy, () => href),
    });
    let established = false;
    upstream.once("connect", () => {
      established = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", (error) => (established ? client.destroy() : refuse(error)));
    client.once("close", () => upstream.destroy());
  }

  /** http(s) only, the allowlist, and a literal IP checked here (names as they resolve, by the lookup). */
  private check(raw: string): URL {
    const url = parseWebUrl(raw);
    const host = normalizeHost(bareHostname(url));
    if (this.allowDomains && !this.allowDomains.some((allowed) => hostMatches(host, allowed))) {
      throw forbidden(`Egress to ${host} refused: ${host} is not on the agent's egress allowlist`);
    }
    return checkWebUrl(url, this.policy);
  }

  /** Drops the connection (the browser's network error), or answers 403 with the reason. */
  private answerRefusal(error: unknown, target: string, res: ServerResponse): void {
    const message = this.refuse(error, target);
    const explain = this.explainRefusals || (isAppError(error) && error.code === "forbidden");
    if (!explain || res.headersSent) {
      res.socket?.destroy();
      return;
    }
    res.writeHead(isRefusal(error) ? 403 : 502, { "content-type": "text/plain" }).end(`${message}\n`);
  }

  private refuse(error: unknown, target: string): string {
    if (!isAppError(error)) return `${target}: ${error instanceof Error ? error.message : String(error)}`;
    this.refused.push(error.message);
    if (this.refused.length > 50) this.refused.shift();
    return error.message;
  }
}

/** The SSRF rule or the allowlist said no (rather than the host being unreachable or unknown). */
function isRefusal(error: unknown): boolean {
  return isAppError(error) && (error.code === "validation" || error.code === "forbidden");
}

/** Lower case, punycode, no trailing dot and no IPv6 brackets: how hosts and allowlist entries compare. */
function normalizeHost(host: string): string {
  const bare = host
    .trim()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
  if (isIPv6(bare)) return bare.toLowerCase();
  return domainToASCII(bare) || bare.toLowerCase();
}

/** The host is the entry or a subdomain of it; an IP literal only ever matches itself. */
function hostMatches(host: string, allowed: string): boolean {
  if (host === allowed) return true;
  if (isIPv4(host) || isIPv6(host)) return false;
  return host.endsWith(`.${allowed}`);
}

function splitHostPort(authority: string): [string, string] {
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(authority);
  if (bracketed?.[1] && bracketed[2]) return [bracketed[1], bracketed[2]];
  const at = authority.lastIndexOf(":");
  return at < 0 ? [authority, "443"] : [authority.slice(0, at), authority.slice(at + 1)];
}
