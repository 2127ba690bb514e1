import { AppError } from "../../../shared/errors.ts";
import type { Attached } from "../../../shared/process/sandbox/index.ts";
import { uriMapping } from "./lsp-protocol.ts";

type Message = {
  id?: number | string;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { message: string };
};

/**
 * The largest message a language server may send: well above what a real one answers for a large
 * project (diagnostics, symbols, a rename's edits), small enough that a hostile server cannot make the
 * service hold more than this for it.
 */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/**
 * What the service may have written to a server that it has not read yet: past it, the server is stopped.
 * A server that stops reading (the workspace's own may) would otherwise have every file opened for it
 * held in the service's memory.
 */
export const MAX_UNREAD_BYTES = 64 * 1024 * 1024;
/** The largest header (its fields up to the blank line): real ones are a few dozen bytes. */
export const MAX_HEADER_BYTES = 8 * 1024;

/** A server broke the framing: a message or header over the limits. */
export class FramingError extends Error {}

const HEADER_END = Buffer.from("\r\n\r\n");

/**
 * Splits a stream of Content-Length framed messages into their bodies, holding at most one message
 * (up to `maxMessage` bytes) and a header (up to `maxHeader`) plus the chunk being read. Chunks are
 * kept as they come: a header's bytes are scanned once, and a body is copied once, when it is whole
 * (linear in what the server sends). A header without Content-Length is skipped (as before); a header
 * or a declared length past the limits throws FramingError.
 */
export class MessageFramer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  /** The body length once its header is read; undefined while reading a header. */
  private bodyLength: number | undefined;
  /** Where the search for the header's end goes on: chunk, offset in it, header bytes so far. */
  private scanChunk = 0;
  private scanOffset = 0;
  private scanned = 0;
  /** Bytes of "\r\n\r\n" matched at the scan position. */
  private matched = 0;

  readonly maxMessage: number;
  readonly maxHeader: number;

  constructor(maxMessage = MAX_MESSAGE_BYTES, maxHeader = MAX_HEADER_BYTES) {
    this.maxMessage = maxMessage;
    this.maxHeader = maxHeader;
  }

  /** Bytes held (received, not yet given out as bodies). */
  get buffered(): number {
    return this.size;
  }

  /** The bodies `chunk` completes, in order. */
  push(chunk: Buffer): Buffer[] {
    const bodies: Buffer[] = [];
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.size += chunk.length;
    }
    for (;;) {
      if (this.bodyLength === undefined && !this.readHeader()) return bodies;
      const length = this.bodyLength as number;
      if (this.size < length) return bodies;
      bodies.push(this.take(length));
      this.bodyLength = undefined;
    }
  }

  /** Reads a header if a whole one is held (true), consuming it. */
  private readHeader(): boolean {
    for (;;) {
      const end = this.headerEnd();
      if (end === undefined) return false;
      const header = this.take(end).toString("latin1");
      const declared = /Content-Length:[ \t]*(\d+)/i.exec(header)?.[1];
      if (declared === undefined) continue;
      const length = Number(declared);
      if (!(length <= this.maxMessage)) {
        throw new FramingError(`language server sent a message over ${this.maxMessage} bytes`);
      }
      this.bodyLength = length;
      return true;
    }
  }

  /** The length of the header held up to its blank line included, scanning only bytes not yet scanned. */
  private headerEnd(): number | undefined {
    for (; this.scanChunk < this.chunks.length; this.scanChunk++, this.scanOffset = 0) {
      const chunk = this.chunks[this.scanChunk] as Buffer;
      while (this.scanOffset < chunk.length) {
        const byte = chunk[this.scanOffset++];
        this.scanned++;
        this.matched = byte === HEADER_END[this.matched] ? this.matched + 1 : byte === 13 ? 1 : 0;
        if (this.matched === HEADER_END.length) {
          const end = this.scanned;
          this.scanChunk = this.scanOffset = this.scanned = this.matched = 0;
          return end;
        }
        if (this.scanned >= this.maxHeader + HEADER_END.length) {
          throw new FramingError(`language server sent a header over ${this.maxHeader} bytes`);
        }
      }
    }
    return undefined;
  }

  /** Removes and answers the first `bytes` held (a header or a whole body): the one copy made. */
  private take(bytes: number): Buffer {
    let count = 0;
    let joined = 0;
    while (joined < bytes) joined += (this.chunks[count++] as Buffer).length;
    const merged =
      count === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks.slice(0, count), joined);
    this.chunks.splice(0, count);
    if (merged.length > bytes) this.chunks.unshift(merged.subarray(bytes));
    this.size -= bytes;
    return merged.subarray(0, bytes);
  }
}

/**
 * A Language Server Protocol client over stdio (JSON-RPC with Content-Length framing): requests with
 * replies, notifications, and an answer for whatever the server asks of us (configuration, capability
 * registration). The server is a confined program the sandbox started (`Sandbox.attach`: its process
 * group, the workspace quota); it is killed with its group at close, when it breaks the framing, and
 * by the sandbox when it takes the workspace past its quota. Each of these fails what is pending.
 */
export class LspClient {
  private readonly server: Attached;
  /** File URIs of the workspace as the service knows it, and as the sandboxed server sees it. */
  private readonly uris: ReturnType<typeof uriMapping>;
  private readonly framer = new MessageFramer();
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private readonly listeners: Array<(message: Message) => void> = [];
  private exited: Error | undefined;

  constructor(server: Attached, uris: { host: string; server: string }) {
    this.server = server;
    this.uris = uriMapping(uris);
    server.stdout.on("data", (chunk: Buffer) => this.receive(chunk));
    server.stdin.on("error", () => undefined);
    void server.done.then((finished) => {
      if (finished.quotaStop) {
        this.fail(new AppError("payload_too_large", `language server stopped: ${finished.quotaStop}`));
      } else if (finished.reason === "spawn_failed") {
        this.fail(new AppError("validation", `language server could not start: ${finished.spawnError}`));
      } else {
        const stderr = finished.stderr.trim().slice(0, 500);
        this.fail(new AppError("unprocessable", `language server exited (${finished.exitCode}): ${stderr}`));
      }
    });
  }

  request<T>(method: string, params: unknown, timeoutMs = 20_000): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new AppError("timeout", `language server did not answer ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.send({ id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    this.send({ method, params });
  }

  /** The first notification `method` whose params satisfy `match`, or null after `timeoutMs`. */
  waitFor<T>(method: string, match: (params: T) => boolean, timeoutMs: number): Promise<T | null> {
    return new Promise((resolve) => {
      const listener = (message: Message) => {
        if (message.method !== method || !match(message.params as T)) return;
        done(message.params as T);
      };
      const done = (value: T | null) => {
        clearTimeout(timer);
        this.listeners.splice(this.listeners.indexOf(listener), 1);
        resolve(value);
      };
      const timer = setTimeout(() => done(null), timeoutMs);
      this.listeners.push(listener);
    });
  }

  async close(): Promise<void> {
    if (!this.exited) {
      await this.request("shutdown", null, 2000).catch(() => undefined);
      this.notify("exit", null);
    }
    this.server.cancel();
  }

  /** The first failure wins: what is pending and whatever is asked later fails with it. */
  private fail(error: Error): void {
    if (this.exited) return;
    this.exited = error;
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
  }

  private send(message: Message): void {
    if (this.exited) return;
    const unread = this.server.stdin.writableLength;
    if (unread > MAX_UNREAD_BYTES) {
      this.fail(
        new AppError(
          "unprocessable",
          `language server does not read what it is sent (${Math.round(unread / 1024 / 1024)} MiB waiting): stopped`,
        ),
      );
      this.server.cancel();
      return;
    }
    const json = this.uris.toServer(JSON.stringify({ jsonrpc: "2.0", ...message }));
    const body = Buffer.from(json);
    this.server.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.server.stdin.write(body);
  }

  private receive(chunk: Buffer): void {
    if (this.exited) return;
    let bodies: Buffer[];
    try {
      bodies = this.framer.push(chunk);
    } catch (error) {
      if (!(error instanceof FramingError)) throw error;
      // A server that breaks the framing is stopped: nothing it sends after is read.
      this.fail(new AppError("unprocessable", error.message));
      this.server.cancel();
      return;
    }
    for (const body of bodies) {
      let message: Message;
      try {
        message = JSON.parse(this.uris.toHost(body.toString("utf8"))) as Message;
      } catch {
        continue;
      }
      this.dispatch(message);
      if (this.exited) return;
    }
  }

  private dispatch(message: Message): void {
    if (message.method !== undefined && message.id !== undefined) {
      // A request from the server: configuration gets one null per item, anything else null.
      const items = (message.params as { items?: unknown[] } | undefined)?.items;
      this.send({
        id: message.id,
        result: message.method === "workspace/configuration" ? (items ?? []).map(() => null) : null,
      } as Message);
      return;
    }
    if (message.method !== undefined) {
      for (const listener of [...this.listeners]) listener(message);
      return;
    }
    const waiting = this.pending.get(message.id as number);
    if (!waiting) return;
    this.pending.delete(message.id as number);
    if (message.error)
      waiting.reject(new AppError("unprocessable", `language server: ${message.error.message}`));
    else waiting.resolve(message.result);
  }
}
