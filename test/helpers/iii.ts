import { type IIIClient, type InitOptions, registerWorker } from "iii-sdk";
import { afterEach, beforeEach } from "vitest";
import { WebSocket } from "ws";
import { startTestServer, type TestServer } from "./server.ts";

/** iii-sdk chats on the console ([iii] and [OTel] lines); tests keep only what they assert on. */
const sdkLine = /^\[(iii|OTel)\]/;
const originalError = console.error.bind(console);
// Reconnect attempts while a server restarts are expected noise; other errors stay visible (and spy-able).
console.error = (...args: unknown[]) => {
  if (typeof args[0] === "string" && args[0].startsWith("[iii] WebSocket error")) return;
  originalError(...args);
};
for (const method of ["debug", "log", "warn"] as const) {
  const original = console[method].bind(console);
  console[method] = (...args: unknown[]) => {
    if (typeof args[0] === "string" && sdkLine.test(args[0])) return;
    original(...args);
  };
}

/** A real iii-sdk worker with telemetry off and quick reconnects (tests drop sockets on purpose). */
export function connectWorker(url: string, name: string, options: InitOptions = {}): IIIClient {
  return registerWorker(url, {
    workerName: name,
    otel: { enabled: false },
    enableMetricsReporting: false,
    reconnectionConfig: { initialDelayMs: 50, maxDelayMs: 200 },
    ...options,
  });
}

/**
 * A fresh server for every test of the file, and real SDK workers connected to it that are shut down
 * (before the server) after each test.
 */
export function serverWithWorkers(): { readonly server: TestServer; worker(name: string): IIIClient } {
  let current: TestServer | undefined;
  const workers: IIIClient[] = [];
  beforeEach(async () => {
    current = await startTestServer();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((client) => client.shutdown()));
    await current?.close();
    current = undefined;
  });
  return {
    get server() {
      if (!current) throw new Error("serverWithWorkers: no server outside a test");
      return current;
    },
    worker(name) {
      const client = connectWorker(this.server.service.engineUrl as string, name);
      workers.push(client);
      return client;
    },
  };
}

/** Polls until `check` returns something truthy (or stops throwing), failing after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs = 5000,
): Promise<Exclude<T, undefined | null | false>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value as Exclude<T, undefined | null | false>;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw lastError ?? new Error(`condition not met within ${timeoutMs} ms`);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A bare protocol client: sends raw frames and records every frame the engine sends back. */
export interface RawClient {
  socket: WebSocket;
  frames: Array<Record<string, unknown>>;
  send(frame: unknown): void;
  /** Resolves the first recorded frame (past or future) matching `predicate`. */
  next(
    predicate: (frame: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  closed: Promise<{ code: number }>;
}

export async function rawClient(
  url: string,
  headers: Record<string, string> = {},
  options: { autoPong?: boolean } = {},
): Promise<RawClient> {
  const socket = new WebSocket(url, { headers, ...options });
  const frames: Array<Record<string, unknown>> = [];
  socket.on("message", (data) => frames.push(JSON.parse(String(data))));
  const closed = new Promise<{ code: number }>((resolve) => socket.on("close", (code) => resolve({ code })));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  return {
    socket,
    frames,
    closed,
    send: (frame) => socket.send(typeof frame === "string" ? frame : JSON.stringify(frame)),
    next: (predicate, timeoutMs = 3000) => eventually(() => frames.find(predicate), timeoutMs),
  };
}
