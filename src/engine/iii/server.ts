import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { type RawData, type WebSocket, WebSocketServer } from "ws";
import { nowMs } from "../../shared/clock.ts";
import type { Logger } from "../../shared/logger.ts";
import { sameSecret } from "../../shared/secrets.ts";
import type { Engine } from "../engine.ts";
import { IiiHub } from "./hub.ts";
import { defaultIiiLimits, type IiiLimits } from "./limits.ts";

export interface IiiServerOptions {
  host: string;
  port: number;
  /** When set, every connection must present it: `Authorization: Bearer <token>` or `?token=`. */
  token?: string;
  limits?: Partial<IiiLimits>;
  logger: Logger;
}

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Binding the worker port beyond this machine without a token would let anyone register functions. */
export function assertSafeEngineBinding(host: string, token: string | undefined): void {
  if (!isLoopback(host) && !token) {
    throw new Error(
      `Refusing to open the worker port on ${host} without a token: any host that can reach it could register functions and HTTP routes. Set AGENTOS_ENGINE_TOKEN (at least 16 characters) or bind AGENTOS_ENGINE_HOST=127.0.0.1.`,
    );
  }
}

/**
 * The iii worker WebSocket. `/` (and `/ws`, the path iii's proxy docs use) carries the worker
 * protocol; `/otel` accepts the SDK's telemetry socket and drops what it sends; anything else is 404.
 */
export class IiiServer {
  readonly hub: IiiHub;
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private readonly options: IiiServerOptions;
  private readonly limits: IiiLimits;
  private readonly lastSeen = new WeakMap<WebSocket, number>();
  private readonly telemetry = new Set<WebSocket>();
  /** Telemetry sockets left unread, by address, until a worker connects from there (upgradeTelemetry). */
  private readonly unread = new Map<string, Set<WebSocket>>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(engine: Engine, options: IiiServerOptions) {
    this.options = options;
    this.limits = { ...defaultIiiLimits, ...options.limits };
    this.hub = new IiiHub(engine, this.limits, options.logger);
    this.http = createServer((_request, response) => {
      response
        .writeHead(426, { "content-type": "text/plain" })
        .end("This port speaks the iii worker protocol over WebSocket\n");
    });
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: this.limits.maxFrameBytes,
      perMessageDeflate: false,
    });
    this.http.on("upgrade", (request, socket, head) => this.upgrade(request, socket, head));
    // After listen, an accept failure (EMFILE, ...) is logged; left unhandled it would end the process.
    this.http.on("error", (error) => this.options.logger.error({ err: error }, "worker port error"));
  }

  async listen(): Promise<string> {
    assertSafeEngineBinding(this.options.host, this.options.token);
    await new Promise<void>((resolve, reject) => {
      this.http.once("error", reject);
      this.http.listen(this.options.port, this.options.host, () => {
        this.http.off("error", reject);
        resolve();
      });
    });
    this.heartbeat = setInterval(() => this.checkLiveness(), this.limits.pingIntervalMs);
    this.heartbeat.unref();
    const { address, port } = this.http.address() as AddressInfo;
    const host = address.includes(":") ? `[${address}]` : address;
    return `ws://${host}:${port}`;
  }

  /** Disconnects every worker (their in-flight calls fail at once) and stops listening. */
  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    this.hub.closeAll();
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    const closed = new Promise<void>((resolve) => this.http.close(() => resolve()));
    // A client that never finished its upgrade request would otherwise hold the close for a minute.
    this.http.closeAllConnections();
    await closed;
  }

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Until ws takes the socket over, a client resetting it must not raise an unhandled 'error'.
    socket.on("error", () => socket.destroy());
    let url: URL;
    try {
      url = new URL(request.url ?? "/", "http://engine");
    } catch {
      refuseUpgrade(socket, 400, "Bad Request");
      return;
    }
    // Browsers send Origin with every WebSocket and let any page open one to localhost, where the port
    // needs no token: such a page would connect as a worker, with system rights. No SDK sends Origin.
    if (request.headers.origin !== undefined) {
      this.options.logger.warn(
        { ip: request.socket.remoteAddress, origin: request.headers.origin },
        "worker connection refused: a browser (Origin header) may not connect to the worker port",
      );
      refuseUpgrade(socket, 403, "Forbidden");
      return;
    }
    const path = url.pathname;
    if (path === "/otel") {
      this.upgradeTelemetry(request, socket, head);
      return;
    }
    if (path !== "/" && path !== "/ws") {
      refuseUpgrade(socket, 404, "Not Found");
      return;
    }
    if (!this.authorized(request, url)) {
      this.options.logger.warn(
        { ip: request.socket.remoteAddress },
        "worker connection refused: bad or missing engine token",
      );
      refuseUpgrade(socket, 401, "Unauthorized");
      return;
    }
    if (this.hub.connections.size >= this.limits.maxConnections) {
      refuseUpgrade(socket, 503, "Service Unavailable");
      return;
    }
    // ws writes its frames to this very socket, so corking it holds them back (WorkerConnection.write).
    this.wss.handleUpgrade(request, socket, head, (ws) =>
      this.acceptWorker(ws, request.socket.remoteAddress ?? "", socket),
    );
  }

  /**
   * The SDK opens its telemetry socket with the bare URL (never its `headers`), so a token in the
   * Authorization header cannot reach it. Its frames are dropped, so it needs no token; a cap of its own
   * keeps such sockets from crowding out workers. Where a token guards the port, a telemetry socket is
   * not read until a worker has connected from its address (the SDK opens both at once): each socket
   * read holds up to a frame (an SDK's batch of spans is megabytes), and 256 of them from anyone were
   * gigabytes. One left unread answers no pings and is dropped as idle.
   */
  private upgradeTelemetry(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.telemetry.size >= this.limits.maxTelemetrySockets) {
      refuseUpgrade(socket, 503, "Service Unavailable");
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) =>
      this.acceptTelemetry(ws, request.socket.remoteAddress ?? ""),
    );
  }

  private authorized(request: IncomingMessage, url: URL): boolean {
    const expected = this.options.token;
    if (!expected) return true;
    const header = request.headers.authorization;
    const given = header?.startsWith("Bearer ") ? header.slice(7).trim() : url.searchParams.get("token");
    return given ? sameSecret(expected, given) : false;
  }

  private acceptWorker(ws: WebSocket, ip: string, transport: Duplex): void {
    const conn = this.hub.attach(ws, ip, transport);
    for (const waiting of this.unread.get(ip) ?? []) waiting.resume();
    this.unread.delete(ip);
    this.watch(ws);
    ws.on("message", (data: RawData, isBinary: boolean) => {
      this.lastSeen.set(ws, nowMs());
      // Binary frames starting OTLP/MTRC/LOGS are telemetry; any other binary frame is JSON, as in iii.
      const text = rawText(data);
      if (isBinary && /^(OTLP|MTRC|LOGS)/.test(text.slice(0, 4))) return;
      try {
        this.hub.receive(conn, text);
      } catch (error) {
        // A bug in handling one frame must not take the process down with it (ws would rethrow).
        this.options.logger.error({ err: error, worker: conn.name }, "failed to handle a worker frame");
      }
    });
    ws.on("close", () => this.hub.detach(conn));
    ws.on("error", (error) => {
      this.options.logger.warn({ err: error, worker: conn.name }, "worker connection failed");
      this.hub.detach(conn);
    });
  }

  private acceptTelemetry(ws: WebSocket, ip: string): void {
    this.telemetry.add(ws);
    ws.on("close", () => {
      this.telemetry.delete(ws);
      this.forgetUnread(ws, ip);
    });
    if (this.options.token && ![...this.hub.connections.values()].some((conn) => conn.ip === ip)) {
      ws.pause();
      this.unread.set(ip, (this.unread.get(ip) ?? new Set()).add(ws));
    }
    this.watch(ws);
    ws.on("message", () => this.lastSeen.set(ws, nowMs()));
    ws.on("error", () => ws.terminate());
  }

  private forgetUnread(ws: WebSocket, ip: string): void {
    const waiting = this.unread.get(ip);
    waiting?.delete(ws);
    if (waiting?.size === 0) this.unread.delete(ip);
  }

  /** Anything received counts as a sign of life (messages are counted by their own listener). */
  private watch(ws: WebSocket): void {
    const touch = () => this.lastSeen.set(ws, nowMs());
    touch();
    ws.on("ping", touch);
    ws.on("pong", touch);
  }

  private checkLiveness(): void {
    const cutoff = nowMs() - this.limits.idleTimeoutMs;
    for (const ws of this.wss.clients) {
      if ((this.lastSeen.get(ws) ?? 0) < cutoff) ws.terminate();
      else ws.ping();
    }
  }
}

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data).toString("utf8");
}

function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  // As ws's own abortHandshake: end, then destroy once written (a client that never reads cannot hold it).
  socket.once("finish", () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
