import { createServer, request as httpRequest, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { isAppError } from "../../../shared/errors.ts";
import { guardedLookup, type NetworkPolicy } from "../../../shared/net/guarded-request.ts";
import { checkWebUrl } from "../../../shared/net/ssrf.ts";

/**
 * The browser's only way out: an HTTP proxy that applies the SSRF rule to every connection Chromium
 * opens (navigations, each redirect hop, subresources, fetches, WebSockets, workers). Names are resolved
 * here and the socket goes to exactly the address that was checked, so a rebinding DNS answer cannot
 * slip a private address in between check and connect.
 */
export class GuardProxy {
  private readonly server: Server;
  private readonly policy: NetworkPolicy;
  /** The rule's messages for connections refused lately, newest last (for error messages). */
  readonly refused: string[] = [];
  private ready: Promise<string> | undefined;

  constructor(policy: NetworkPolicy) {
    this.policy = policy;
    this.server = createServer((req, res) => {
      const target = req.url ?? "";
      let url: URL;
      try {
        url = this.check(target);
      } catch (error) {
        // No answer at all: the page gets a network error, not a response it could mistake for the site's.
        this.refuse(error, target);
        req.socket.destroy();
        return;
      }
      const upstream = httpRequest(
        {
          host: url.hostname.replace(/^\[|\]$/g, ""),
          port: url.port || 80,
          path: `${url.pathname}${url.search}`,
          method: req.method,
          headers: req.headers,
          lookup: guardedLookup(policy, () => url.href),
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", (error) => {
        this.refuse(error, target);
        if (!res.headersSent && !isAppError(error))
          res.writeHead(502, { "content-type": "text/plain" }).end(String(error.message));
        else req.socket.destroy();
      });
      req.pipe(upstream);
    });
    this.server.on("connect", (req, client: Socket, head: Buffer) => {
      const [host = "", port = "443"] = splitHostPort(req.url ?? "");
      const href = `https://${host.includes(":") ? `[${host}]` : host}:${port}/`;
      client.on("error", () => undefined);
      try {
        this.check(href);
      } catch (error) {
        this.refuse(error, href);
        client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
        return;
      }
      const upstream = connect({ host, port: Number(port), lookup: guardedLookup(policy, () => href) });
      upstream.once("connect", () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on("error", (error) => {
        this.refuse(error, href);
        client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      });
    });
  }

  /** The proxy's address (`http://127.0.0.1:port`), listening from the first call on. */
  address(): Promise<string> {
    this.ready ??= new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", () =>
        resolve(`http://127.0.0.1:${(this.server.address() as AddressInfo).port}`),
      );
      this.server.unref();
    });
    return this.ready;
  }

  /** http(s) only, and a literal IP checked here (names are checked as they resolve, by the lookup). */
  private check(raw: string): URL {
    return checkWebUrl(raw, this.policy);
  }

  private refuse(error: unknown, target: string): string {
    const message = isAppError(error) ? error.message : `${target}: ${(error as Error).message}`;
    if (isAppError(error)) {
      this.refused.push(message);
      if (this.refused.length > 50) this.refused.shift();
    }
    return message;
  }
}

function splitHostPort(authority: string): [string, string] {
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(authority);
  if (bracketed) return [bracketed[1] as string, bracketed[2] as string];
  const at = authority.lastIndexOf(":");
  return at < 0 ? [authority, "443"] : [authority.slice(0, at), authority.slice(at + 1)];
}

/** One proxy per network policy (the service has one; tests may have several). */
const proxies = new WeakMap<NetworkPolicy, GuardProxy>();
export function proxyFor(policy: NetworkPolicy): GuardProxy {
  let proxy = proxies.get(policy);
  if (!proxy) {
    proxy = new GuardProxy(policy);
    proxies.set(policy, proxy);
  }
  return proxy;
}
