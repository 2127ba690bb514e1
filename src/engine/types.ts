import type { z } from "zod";

/**
 * Who is calling. HTTP calls carry the API key's principal, or `anonymous` on routes that need no key;
 * a function called from inside another runs as its caller unless it asks for the system explicitly;
 * calls with no caller at all (cron, subscriptions, start-up) run as the system.
 */
export type Principal =
  | { kind: "system" }
  | { kind: "admin"; keyId: string }
  /** `agentId`: the agent acting, when an agent's own call (its turn, its job) runs as its realm. */
  | { kind: "realm"; keyId: string; realmId: string; agentId?: string }
  | { kind: "anonymous" };

export const systemPrincipal: Principal = { kind: "system" };
export const anonymousPrincipal: Principal = { kind: "anonymous" };

export interface InvocationContext {
  functionId: string;
  auth: Principal;
  requestId?: string;
  metadata?: Record<string, unknown>;
  /** Aborted when the invocation times out, so long work can stop early. */
  signal: AbortSignal;
  /**
   * Tells the caller how the work goes before it ends (an agent turn's text deltas and tool calls);
   * absent when the caller did not ask (see TriggerRequest.onProgress), so work need not prepare it.
   */
  progress?: (event: unknown) => void;
}

export interface FunctionDefinition<Schema extends z.ZodType = z.ZodType> {
  id: string;
  description?: string;
  input?: Schema;
  /** What a success answers, for the OpenAPI document (not checked at run time). */
  output?: z.ZodType;
  /** For a function given the raw request envelope: its JSON body, for the OpenAPI document. */
  body?: z.ZodType;
  metadata?: Record<string, unknown>;
}

export type FunctionHandler<Input = unknown, Output = unknown> = (
  input: Input,
  ctx: InvocationContext,
) => Output | Promise<Output>;

export interface RegisteredFunction {
  id: string;
  description?: string;
  input?: z.ZodType;
  output?: z.ZodType;
  body?: z.ZodType;
  metadata?: Record<string, unknown>;
  worker: string;
  handler: FunctionHandler<unknown>;
}

export type TriggerAction = { type: "void" };

export interface TriggerRequest {
  function_id: string;
  payload?: unknown;
  action?: TriggerAction;
  timeout_ms?: number;
  auth?: Principal;
  requestId?: string;
  metadata?: Record<string, unknown>;
  /**
   * In-process callers only: aborting it aborts the invocation (its `ctx.signal`) and rejects the call
   * at once, as a timeout does (a cancelled workflow run stops its running step this way).
   */
  signal?: AbortSignal;
  /** In-process callers only: receives what the function reports through `ctx.progress`, in order. */
  onProgress?: (event: unknown) => void;
}

export interface TriggerRegistration {
  id?: string;
  type: string;
  function_id: string;
  config: unknown;
  metadata?: Record<string, unknown>;
}

export interface TriggerRecord {
  id: string;
  type: string;
  function_id: string;
  config: unknown;
  metadata?: Record<string, unknown>;
  worker: string;
}

/** A trigger type decides when its bound functions run (an HTTP route, a cron schedule, a topic). */
export interface TriggerTypeProvider {
  id: string;
  description: string;
  /** Throws (synchronously) to refuse an invalid configuration. */
  register(trigger: TriggerRecord): void;
  unregister(trigger: TriggerRecord): void;
  /** Withdraws many bindings at once, where one by one would rebuild an index each time (HTTP routes). */
  unregisterMany?(triggers: TriggerRecord[]): void;
}

export interface WorkerInfo {
  name: string;
  description?: string;
  runtime: string;
  isolation: string | null;
  status: "available" | "connected";
  connected_at_ms: number;
  /** Remote workers: the connection id and what the worker reported about itself. */
  id?: string;
  version?: string;
  os?: string;
  pid?: number;
  ip_address?: string;
  active_invocations?: number;
}

export type TriggerFn = (request: TriggerRequest) => Promise<unknown>;

/** What a worker's client needs of the engine (engine.ts implements it): registration and calls. */
export interface FunctionHost {
  registerFunction<Input>(
    worker: string,
    definition: FunctionDefinition,
    handler: FunctionHandler<Input>,
  ): unknown;
  registerTrigger(worker: string, registration: TriggerRegistration): { id: string; unregister(): void };
  registerTriggerType(provider: TriggerTypeProvider): void;
  trigger(request: TriggerRequest): Promise<unknown>;
}
