import { AsyncLocalStorage } from "node:async_hooks";
import { nowMs } from "../shared/clock.ts";
import { AppError, describeZodError, FUNCTION_NOT_FOUND } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { type Logger, silentLogger } from "../shared/logger.ts";
import { actsForAgent, withActingAgent } from "./acting-agent.ts";
import { FunctionRegistry } from "./function-registry.ts";
import type { TelemetryEvent } from "./telemetry.ts";
import { TriggerRegistry } from "./trigger-registry.ts";
import {
  type FunctionDefinition,
  type FunctionHandler,
  type FunctionHost,
  type InvocationContext,
  type Principal,
  type RegisteredFunction,
  systemPrincipal,
  type TriggerRegistration,
  type TriggerRequest,
  type TriggerTypeProvider,
  type WorkerInfo,
} from "./types.ts";
import { WorkerClient } from "./worker-client.ts";

export const DEFAULT_TIMEOUT_MS = 300_000;

/**
 * The principal of the function running now. A call made from inside a handler runs as that caller
 * unless it names another `auth` (e.g. systemPrincipal, to elevate on purpose), so a realm-bound key
 * cannot reach another realm through a function that calls another function.
 */
const callers = new AsyncLocalStorage<Principal>();
/** Longest delay setTimeout honours; a longer one (or Infinity) would fire after 1 ms instead. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

export type InvocationErrorListener = (functionId: string, error: unknown) => void;

/** The function bus: every capability is a function, every caller goes through trigger(). */
export class Engine implements FunctionHost {
  readonly logger: Logger;
  readonly functions = new FunctionRegistry();
  readonly triggers: TriggerRegistry;
  private readonly workers = new Map<string, WorkerInfo>();
  private readonly errorListeners: InvocationErrorListener[] = [];
  private readonly telemetryListeners: Array<(event: TelemetryEvent) => void> = [];
  private readonly pendingVoid = new Set<Promise<unknown>>();
  private readonly shutdownHooks: Array<() => Promise<void>> = [];

  constructor(options: { logger?: Logger } = {}) {
    this.logger = options.logger ?? silentLogger();
    this.triggers = new TriggerRegistry(this.logger);
  }

  /** An in-process worker handle with the iii-sdk surface (registerFunction, registerTrigger, trigger). */
  worker(name: string, description?: string): WorkerClient {
    if (!this.workers.has(name)) {
      this.workers.set(name, {
        name,
        description,
        runtime: "engine",
        isolation: "in-process",
        status: "available",
        connected_at_ms: nowMs(),
      });
    }
    return new WorkerClient(this, name);
  }

  workerCount(): number {
    return this.workers.size;
  }

  /**
   * Lists a worker under `key` (its name in-process, its connection id when remote). Functions and
   * triggers registered with that key are counted as its own.
   */
  setWorkerInfo(key: string, info: WorkerInfo): void {
    this.workers.set(key, info);
  }

  removeWorkerInfo(key: string): void {
    this.workers.delete(key);
  }

  /** The display name of the worker registered under `key`, if it has told us one. */
  workerName(key: string): string | undefined {
    return this.workers.get(key)?.name;
  }

  listWorkers(): Array<WorkerInfo & { function_count: number }> {
    return [...this.workers.entries()]
      .map(([key, info]) => ({ ...info, function_count: this.functions.countByWorker(key) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  registerFunction<Input>(
    worker: string,
    definition: FunctionDefinition,
    handler: FunctionHandler<Input>,
  ): RegisteredFunction {
    return this.functions.add({ ...definition, worker, handler: handler as FunctionHandler<unknown> });
  }

  unregisterFunction(id: string): boolean {
    return this.functions.remove(id);
  }

  registerTriggerType(provider: TriggerTypeProvider): void {
    this.triggers.addType(provider);
  }

  /** Withdraws a trigger type; its bindings are parked until a provider registers the type again. */
  unregisterTriggerType(id: string): boolean {
    return this.triggers.removeType(id);
  }

  registerTrigger(worker: string, registration: TriggerRegistration): { id: string; unregister(): void } {
    const record = this.triggers.add({ ...registration, id: registration.id ?? newId(), worker });
    return { id: record.id, unregister: () => this.triggers.remove(record.id) };
  }

  unregisterTrigger(id: string): boolean {
    return this.triggers.remove(id);
  }

  onInvocationError(listener: InvocationErrorListener): void {
    this.errorListeners.push(listener);
  }

  /** Observers of telemetry (metrics, logs); a failing one disturbs neither the others nor the work. */
  onTelemetry(listener: (event: TelemetryEvent) => void): void {
    this.telemetryListeners.push(listener);
  }

  observe(event: TelemetryEvent): void {
    for (const listener of this.telemetryListeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error({ err: error, event: event.type }, "telemetry listener failed");
      }
    }
  }

  /**
   * Calls a function by id. Validates the payload, enforces the timeout, and supports fire-and-forget:
   * a void call resolves undefined at once and only logs its failures (unknown function and invalid
   * payload included), as iii does.
   */
  trigger(request: TriggerRequest): Promise<unknown> {
    if (request.action?.type === "void") {
      // One reaction for both outcomes (a completion makes several void calls: publish, its
      // subscribers, telemetry); catch + finally cost two more promises each.
      const run: Promise<void> = this.call(request).then(
        () => {
          this.pendingVoid.delete(run);
        },
        (error: unknown) => {
          this.pendingVoid.delete(run);
          this.logger.warn(
            { err: error, functionId: request.function_id },
            "fire-and-forget invocation failed",
          );
        },
      );
      this.pendingVoid.add(run);
      return Promise.resolve(undefined);
    }
    return this.call(request);
  }

  /** Waits for fire-and-forget invocations still running (used on shutdown). */
  async drain(): Promise<void> {
    while (this.pendingVoid.size > 0) await Promise.allSettled([...this.pendingVoid]);
  }

  /** Work to do once when the service stops (e.g. closing child processes); drain() waits for it. */
  onShutdown(hook: () => Promise<void>): void {
    this.shutdownHooks.push(hook);
  }

  shutdown(): void {
    this.triggers.clear();
    for (const hook of this.shutdownHooks.splice(0)) {
      const done = hook().catch(() => undefined);
      this.pendingVoid.add(done);
      void done.finally(() => this.pendingVoid.delete(done));
    }
  }

  /** Never throws synchronously: every failure, lookup and validation included, is a rejection. */
  private call(request: TriggerRequest): Promise<unknown> {
    const fn = this.functions.get(request.function_id);
    if (!fn) return Promise.reject(functionNotFound(request.function_id));
    const current = callers.getStore() ?? systemPrincipal;
    const ctx = new CallContext(fn.id, request, current);
    let pending: unknown;
    try {
      const payload = actsForAgent(fn.metadata)
        ? withActingAgent(request.payload, ctx.auth)
        : request.payload;
      const input = parseInput(fn, payload);
      // Entering a context costs; when the principal does not change there is nothing to enter.
      pending =
        ctx.auth === current ? fn.handler(input, ctx) : callers.run(ctx.auth, () => fn.handler(input, ctx));
    } catch (error) {
      this.reportError(fn.id, error);
      return Promise.reject(error);
    }
    if (!isPromiseLike(pending)) return Promise.resolve(pending);
    const timeoutMs = effectiveTimeout(request.timeout_ms);
    const callerSignal = request.signal;
    return new Promise((resolve, reject) => {
      let stopped = false;
      const stop = (error: AppError, report: boolean) => {
        if (stopped) return;
        stopped = true;
        clearTimeout(timer);
        callerSignal?.removeEventListener("abort", onCallerAbort);
        ctx.abort(error);
        if (report) this.reportError(fn.id, error);
        reject(error);
      };
      const timer = setTimeout(
        () => stop(new AppError("timeout", `Function ${fn.id} timed out after ${timeoutMs} ms`), true),
        timeoutMs,
      );
      const onCallerAbort = () =>
        stop(
          new AppError("conflict", `Function ${fn.id} was cancelled by its caller`, { reason: "cancelled" }),
          false,
        );
      if (callerSignal?.aborted) onCallerAbort();
      else callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
      pending.then(
        (value) => {
          if (stopped) return;
          stopped = true;
          clearTimeout(timer);
          callerSignal?.removeEventListener("abort", onCallerAbort);
          resolve(value);
        },
        (error) => {
          if (stopped) return;
          stopped = true;
          clearTimeout(timer);
          callerSignal?.removeEventListener("abort", onCallerAbort);
          this.reportError(fn.id, error);
          reject(error);
        },
      );
    });
  }

  private reportError(functionId: string, error: unknown): void {
    for (const listener of this.errorListeners) {
      try {
        listener(functionId, error);
      } catch (listenerError) {
        this.logger.error({ err: listenerError, functionId }, "invocation error listener failed");
      }
    }
  }
}

/**
 * A handler's context. A class rather than an object literal: a literal that defines the `signal`
 * getter is built on V8's slow path, about a microsecond per call, and a completion makes a dozen calls
 * or more (route, catalog, ledger, state, publish). The AbortController is made only when a handler
 * asks for its signal, or when the call is stopped (time out, caller gone).
 */
class CallContext implements InvocationContext {
  readonly functionId: string;
  readonly auth: Principal;
  readonly requestId?: string;
  readonly metadata?: Record<string, unknown>;
  readonly progress?: (event: unknown) => void;
  #controller: AbortController | undefined;

  constructor(functionId: string, request: TriggerRequest, current: Principal) {
    this.functionId = functionId;
    this.auth = request.auth ?? current;
    this.requestId = request.requestId;
    this.metadata = request.metadata;
    this.progress = request.onProgress;
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    this.#controller ??= new AbortController();
    this.#controller.abort(reason);
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === "function";
}

function effectiveTimeout(timeoutMs: number | undefined): number {
  if (timeoutMs === undefined || Number.isNaN(timeoutMs)) return DEFAULT_TIMEOUT_MS;
  return Math.min(Math.max(timeoutMs, 0), MAX_TIMEOUT_MS);
}

function parseInput(fn: RegisteredFunction, payload: unknown): unknown {
  if (!fn.input) return payload;
  const result = fn.input.safeParse(payload ?? {});
  if (!result.success) {
    throw new AppError("validation", describeZodError(result.error), { reason: "deserialization_error" });
  }
  return result.data;
}

export function functionNotFound(id: string): AppError {
  return new AppError("not_found", `Function ${id} not found`, { reason: FUNCTION_NOT_FOUND });
}
