import { AppError } from "../../../shared/errors.ts";
import type { Prepared } from "../../../shared/process/sandbox/index.ts";
import { killGroup, type PipedChild, spawnWithPipes } from "../../../shared/process/supervise.ts";
import { uriMapping } from "./lsp-protocol.ts";

type Message = {
  id?: number | string;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { message: string };
};

/**
 * A Language Server Protocol client over stdio (JSON-RPC with Content-Length framing): requests with
 * replies, notifications, and an answer for whatever the server asks of us (configuration, capability
 * registration). The server runs in its own process group and is killed with it at close.
 */
export class LspClient {
  private readonly child: PipedChild;
  /** File URIs of the workspace as the service knows it, and as the sandboxed server sees it. */
  private readonly uris: ReturnType<typeof uriMapping>;
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private readonly listeners: Array<(message: Message) => void> = [];
  private stderr = "";
  private exited: Error | undefined;

  constructor(prepared: Prepared, uris: { host: string; server: string }) {
    this.uris = uriMapping(uris);
    try {
      this.child = spawnWithPipes(prepared.command, prepared.args, prepared);
    } finally {
      prepared.release();
    }
    this.child.stdout.on("data", (chunk: Buffer) => this.receive(chunk));
    this.child.stderr.on("data", (chunk: Buffer) => {
      if (this.stderr.length < 4000) this.stderr += chunk.toString();
    });
    this.child.stdin.on("error", () => undefined);
    const fail = (error: Error) => {
      this.exited = error;
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
    };
    this.child.on("error", (error) =>
      fail(new AppError("validation", `language server could not start: ${error.message}`)),
    );
    this.child.on("exit", (code) =>
      fail(
        new AppError(
          "unprocessable",
          `language server exited (${code}): ${this.stderr.trim().slice(0, 500)}`,
        ),
      ),
    );
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
    if (this.child.pid) killGroup(this.child.pid, "SIGKILL");
  }

  private send(message: Message): void {
    if (this.exited) return;
    const json = this.uris.toServer(JSON.stringify({ jsonrpc: "2.0", ...message }));
    const body = Buffer.from(json);
    this.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.child.stdin.write(body);
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf("\r\n\r\n");
      if (headerEnd < 0) return;
      const length = Number(
        /Content-Length:\s*(\d+)/i.exec(this.buffer.subarray(0, headerEnd).toString("latin1"))?.[1] ??
          Number.NaN,
      );
      if (!Number.isFinite(length)) {
        this.buffer = this.buffer.subarray(headerEnd + 4);
        continue;
      }
      if (this.buffer.length < headerEnd + 4 + length) return;
      const body = this.uris.toHost(
        this.buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString("utf8"),
      );
      this.buffer = this.buffer.subarray(headerEnd + 4 + length);
      let message: Message;
      try {
        message = JSON.parse(body) as Message;
      } catch {
        continue;
      }
      this.dispatch(message);
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
