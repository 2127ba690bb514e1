import pino from "pino";
import { afterEach, beforeEach } from "vitest";
import type { Engine } from "../../src/engine/engine.ts";
import { type CreateEngineOptions, createEngine } from "../../src/engine/index.ts";
import { type StateClient, stateClient } from "../../src/engine/state/client.ts";
import { registerStateFunctions } from "../../src/engine/state/functions.ts";
import { SqliteStateStore } from "../../src/engine/state/sqlite.ts";
import type { Logger } from "../../src/shared/logger.ts";

/**
 * A real engine wired the way the server wires it (builtins, cron, subscribe on an in-process bus).
 * Call `engine.shutdown()` when done so cron jobs stop.
 */
export function createTestEngine(options: CreateEngineOptions = {}): Engine {
  return createEngine(options);
}

/** A test engine with the state functions over an in-memory SQLite store, and a state client on it. */
export function createStateEngine(): {
  engine: Engine;
  store: SqliteStateStore;
  state: StateClient;
  close(): Promise<void>;
} {
  const engine = createTestEngine();
  const store = new SqliteStateStore(":memory:");
  registerStateFunctions(engine, store);
  const state = stateClient((request) => engine.trigger(request));
  return {
    engine,
    store,
    state,
    async close() {
      engine.shutdown();
      await store.close();
    },
  };
}

/**
 * A state engine made anew for each test of the describe block this is called in (closed after each):
 * the client returned always speaks to the current test's.
 */
export function stateEachTest(): StateClient {
  let current: ReturnType<typeof createStateEngine> | undefined;
  beforeEach(() => {
    current = createStateEngine();
  });
  afterEach(() => current?.close());
  return new Proxy({} as StateClient, {
    get: (_target, name) => {
      if (!current) throw new Error("stateEachTest: used outside a test");
      const value = Reflect.get(current.state, name);
      return typeof value === "function" ? value.bind(current.state) : value;
    },
  });
}

export interface LogEntry {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A pino logger that keeps every entry (debug and up) in memory, for asserting what was logged. */
export function createCapturingLogger(): { logger: Logger; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const destination = {
    write(line: string) {
      entries.push(JSON.parse(line) as LogEntry);
    },
  };
  return { logger: pino({ level: "debug" }, destination), entries };
}

/** A promise with its resolve function, to let a test open a gate or wait for a callback. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
