import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import { nowMs } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import type { InvocationContext, WorkerInfo } from "../types.ts";
import { fromErrorBody, invocationStopped } from "./errors.ts";
import type { IiiLimits } from "./limits.ts";

/** The part of a net.Socket that holds writes back (cork) and sends them together (uncork). */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

interface PendingCall {
  functionId: string;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** What a worker said about itself through engine::workers::register. */
export interface WorkerMetadata {
  name?: string;
  description?: string;
  runtime?: string;
  version?: string;
  os?: string;
  pid?: number;
  isolation?: string | null;
}

/**
 * One worker's socket: its identity (id and reattach token), what it registered, and the calls in
 * flight in both directions. Only this connection can answer the calls sent to it.
 */
export class WorkerConnection {
  readonly id = randomUUID();
  readonly reattachToken = randomUUID();
  readonly connectedAt = nowMs();
  readonly socket: WebSocket;
  readonly ip: string;
  readonly functions = new Set<string>();
  readonly triggers = new Set<string>();
  readonly triggerTypes = new Set<string>();
  /** Calls the engine sent to this worker, by invocation id. */
  private readonly outgoing = new Map<string, PendingCall>();
  /** Calls this worker made that are still running (its flood guard). */
  inbound = 0;
  metadata: WorkerMetadata | undefined;
  closed = false;
  private readonly limits: IiiLimits;
  private readonly warned = new Set<string>();
  /** The TCP socket under the WebSocket, when known: it lets a burst of frames leave in one write. */
  private readonly transport: Corkable | undefined;
  /** A frame was written in this turn of the event loop (the turn ends with the next-tick queue). */
  private turnOpen = false;
  private corked = false;

  constructor(socket: WebSocket, ip: string, limits: IiiLimits, transport?: Corkable) {
    this.socket = socket;
    this.ip = ip;
    this.limits = limits;
    this.transport = transport;
  }

  get name(): string {
    return this.metadata?.name ?? `worker-${this.id.slice(0, 8)}`;
  }

  /**
   * Sends a frame; false when the socket is gone. A worker that stops reading is cut off. Throws a
   * validation error for a frame that is not JSON (a BigInt or a cycle in a payload), sending nothing.
   */
  send(frame: object): boolean {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return false;
    if (this.socket.bufferedAmount > this.limits.maxBufferedBytes) {
      this.socket.terminate();
      return false;
    }
    let text: string;
    try {
      text = JSON.stringify(frame);
    } catch (error) {
      throw new AppError("validation", `Cannot send to worker ${this.name}: ${(error as Error).message}`);
    }
    this.write(text);
    return true;
  }

  /**
   * The first frame of a turn is written at once, so a lone call waits for nothing. Later frames of the
   * same turn (calls resumed by answers that arrived in one read, a fanout's invocations) are held
   * until the turn's end and leave in one system call. Writes were a third of the CPU with 64 calls in
   * flight to one worker (each a syscall that, on loopback, also wakes the reader); written together,
   * the iii bench at concurrency 64 went from 20–22 000 to 24–28 000 calls a second.
   */
  private write(text: string): void {
    if (!this.turnOpen) {
      this.turnOpen = true;
      process.nextTick(this.endTurn);
    } else if (!this.corked && this.transport) {
      this.corked = true;
      this.transport.cork();
    }
    this.socket.send(text);
  }

  private readonly endTurn = () => {
    this.turnOpen = false;
    if (!this.corked) return;
    this.corked = false;
    this.transport?.uncork();
  };

  /** Invokes a function this worker provides and waits for its invocationresult. */
  call(functionId: string, data: unknown, ctx: InvocationContext): Promise<unknown> {
    if (this.closed) return Promise.reject(invocationStopped(functionId, this.name));
    if (this.outgoing.size >= this.limits.maxPendingPerWorker) {
      return Promise.reject(
        new AppError(
          "unavailable",
          `Worker ${this.name} has ${this.outgoing.size} invocations waiting for an answer; try again later`,
          { reason: "worker_busy" },
        ),
      );
    }
    const invocationId = randomUUID();
    const frame: Record<string, unknown> = {
      type: "invokefunction",
      invocation_id: invocationId,
      function_id: functionId,
      data,
    };
    if (ctx.metadata !== undefined) frame.metadata = ctx.metadata;
    return new Promise((resolve, reject) => {
      // Sent first: a frame that cannot be serialised rejects the call and leaves nothing pending.
      this.send(frame);
      this.outgoing.set(invocationId, { functionId, resolve, reject });
      // The engine's timeout aborts the call: forget it, so a late answer is dropped.
      ctx.signal.addEventListener("abort", () => this.outgoing.delete(invocationId), { once: true });
    });
  }

  /** An invocationresult from this worker; answers nobody when the call already timed out. */
  settle(invocationId: string, result: unknown, error: unknown): void {
    const pending = this.outgoing.get(invocationId);
    if (!pending) return;
    this.outgoing.delete(invocationId);
    if (error) pending.reject(fromErrorBody(error, pending.functionId));
    else pending.resolve(result);
  }

  /** Fails every call waiting on this worker with invocation_stopped (it went away). */
  failPending(): void {
    const pending = [...this.outgoing.values()];
    this.outgoing.clear();
    for (const call of pending) call.reject(invocationStopped(call.functionId, this.name));
  }

  pendingCount(): number {
    return this.outgoing.size;
  }

  /** The engine::workers::list entry (shown once the worker has registered its metadata). */
  info(): WorkerInfo {
    const meta = this.metadata ?? {};
    const connection = this;
    return {
      name: this.name,
      description: meta.description,
      runtime: meta.runtime ?? "unknown",
      version: meta.version,
      os: meta.os,
      pid: meta.pid,
      isolation: meta.isolation ?? null,
      status: "connected",
      connected_at_ms: this.connectedAt,
      id: this.id,
      ip_address: this.ip,
      get active_invocations() {
        return connection.pendingCount() + connection.inbound;
      },
    };
  }

  /** True the first time a given problem is seen on this connection: floods are logged once. */
  firstTime(problem: string): boolean {
    if (this.warned.has(problem)) return false;
    this.warned.add(problem);
    return true;
  }
}
