import { AppError, badRequest, describeZodError, notFound } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { type Logger, silentLogger } from "../shared/logger.ts";
import { FunctionRegistry } from "./function-registry.ts";
import { TriggerRegistry } from "./trigger-registry.ts";
import {
  type FunctionDefinition,
  type FunctionHandler,
  type InvocationContext,
  type RegisteredFunction,
  systemPrincipal,
  type TriggerRegistration,
  type TriggerRequest,
  type TriggerTypeProvider,
  type WorkerInfo,
} from "./types.ts";
import { WorkerClient } from "./worker-client.ts";

export const DEFAULT_TIMEOUT_MS = 300_000;
/** Longest delay setTimeout honours; a longer one (or Infinity) would fire after 1 ms instead. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

export type InvocationErrorListener = (functionId: string, error: unknown) => void;

/** The function bus: every capability is a function, every caller goes through trigger(). */
export class Engine {
  readonly logger: Logger;
  readonly functions = new FunctionRegistry();
  readonly triggers: TriggerRegistry;
  private readonly workers = new Map<string, WorkerInfo>();
  private readonly errorListeners: InvocationErrorListener[] = [];
  private readonly pendingVoid = new Set<Promise<unknown>>();

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
        connected_at_ms: Date.now(),
      });
    }
    return new WorkerClient(this, name);
  }

  listWorkers(): Array<WorkerInfo & { function_count: number }> {
    return [...this.workers.values()]
      .map((info) => ({ ...info, function_count: this.functions.countByWorker(info.name) }))
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

  registerTrigger(worker: string, registration: TriggerRegistration): { id: string; unregister(): void } {
    const record = this.triggers.add({ ...registration, id: registration.id ?? newId(), worker });
    return { id: record.id, unregister: () => this.triggers.remove(record.id) };
  }

  onInvocationError(listener: InvocationErrorListener): void {
    this.errorListeners.push(listener);
  }

  /**
   * Calls a function by id. Validates the payload, enforces the timeout, and supports fire-and-forget:
   * a void call resolves undefined at once and only logs its failures (unknown function and invalid
   * payload included), as iii does.
   */
  async trigger(request: TriggerRequest): Promise<unknown> {
    if (request.action?.type === "void") {
      const run = this.call(request).catch((error) => {
        this.logger.warn(
          { err: error, functionId: request.function_id },
          "fire-and-forget invocation failed",
        );
      });
      this.pendingVoid.add(run);
      run.finally(() => this.pendingVoid.delete(run));
      return undefined;
    }
    return this.call(request);
  }

  /** Waits for fire-and-forget invocations still running (used on shutdown). */
  async drain(): Promise<void> {
    while (this.pendingVoid.size > 0) await Promise.allSettled([...this.pendingVoid]);
  }

  shutdown(): void {
    this.triggers.clear();
  }

  private async call(request: TriggerRequest): Promise<unknown> {
    const fn = this.functions.get(request.function_id);
    if (!fn) throw notFound(`Function ${request.function_id} not found`);
    return this.invoke(fn, parseInput(fn, request.payload), request);
  }

  private async invoke(fn: RegisteredFunction, input: unknown, request: TriggerRequest): Promise<unknown> {
    const timeoutMs = effectiveTimeout(request.timeout_ms);
    const controller = new AbortController();
    const ctx: InvocationContext = {
      functionId: fn.id,
      auth: request.auth ?? systemPrincipal,
      requestId: request.requestId,
      metadata: request.metadata,
      signal: controller.signal,
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new AppError("timeout", `Function ${fn.id} timed out after ${timeoutMs} ms`);
        controller.abort(error);
        reject(error);
      }, timeoutMs);
    });
    try {
      return await Promise.race([fn.handler(input, ctx), timeout]);
    } catch (error) {
      for (const listener of this.errorListeners) {
        try {
          listener(fn.id, error);
        } catch (listenerError) {
          this.logger.error({ err: listenerError, functionId: fn.id }, "invocation error listener failed");
        }
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

function effectiveTimeout(timeoutMs: number | undefined): number {
  if (timeoutMs === undefined || Number.isNaN(timeoutMs)) return DEFAULT_TIMEOUT_MS;
  return Math.min(Math.max(timeoutMs, 0), MAX_TIMEOUT_MS);
}

function parseInput(fn: RegisteredFunction, payload: unknown): unknown {
  if (!fn.input) return payload;
  const result = fn.input.safeParse(payload ?? {});
  if (!result.success) throw badRequest(describeZodError(result.error));
  return result.data;
}
