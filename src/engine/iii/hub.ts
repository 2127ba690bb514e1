import type { WebSocket } from "ws";
import type { Logger } from "../../shared/logger.ts";
import { sameSecret } from "../../shared/secrets.ts";
import type { Engine } from "../engine.ts";
import { type Corkable, WorkerConnection, type WorkerMetadata } from "./connection.ts";
import { handleInvoke, type InvocationDeps } from "./invocations.ts";
import { type IiiLimits, oversized } from "./limits.ts";
import { type FrameError, type InboundFrame, parseFrame } from "./protocol.ts";
import { RemoteFunctions } from "./remote-functions.ts";
import { overlappedRoute } from "./route-overlap.ts";
import { RemoteTriggerType, WorkersAvailableTriggerType } from "./trigger-types.ts";

type Frame<T extends InboundFrame["type"]> = Extract<InboundFrame, { type: T }>;

/**
 * The engine's side of the iii worker protocol: one WorkerConnection per socket, frames handled one at
 * a time in arrival order (registrations are synchronous, so a reattach finishes its cleanup before
 * the replayed registrations behind it), invocations run concurrently.
 */
export class IiiHub {
  readonly connections = new Map<string, WorkerConnection>();
  private readonly engine: Engine;
  private readonly logger: Logger;
  private readonly limits: IiiLimits;
  private readonly functions: RemoteFunctions;
  private readonly providers = new Map<string, WorkerConnection>();
  private readonly workersAvailable: WorkersAvailableTriggerType;
  private readonly invocations: InvocationDeps;

  constructor(engine: Engine, limits: IiiLimits, logger: Logger) {
    this.engine = engine;
    this.logger = logger;
    this.limits = limits;
    this.functions = new RemoteFunctions(engine, limits);
    this.workersAvailable = new WorkersAvailableTriggerType((call) => engine.trigger(call), logger);
    engine.registerTriggerType(this.workersAvailable);
    this.invocations = {
      engine,
      logger,
      limits,
      registerWorker: (conn, metadata) => this.describe(conn, metadata),
    };
  }

  /**
   * A new socket: it gets its id and reattach token before anything else is read from it. `transport`
   * is the TCP socket under it (its frames are then written in bursts, see WorkerConnection.write).
   */
  attach(socket: WebSocket, ip: string, transport?: Corkable): WorkerConnection {
    const conn = new WorkerConnection(socket, ip, this.limits, transport);
    this.connections.set(conn.id, conn);
    conn.send({ type: "workerregistered", worker_id: conn.id, reattach_token: conn.reattachToken });
    this.workersAvailable.emit("worker_connected", conn.id);
    return conn;
  }

  /** One inbound text frame. A bad frame is logged and refused on its own; the connection stays. */
  receive(conn: WorkerConnection, data: string): void {
    if (conn.closed) return;
    let frame: InboundFrame | null;
    try {
      frame = parseFrame(data);
    } catch (error) {
      this.refuseFrame(conn, error as FrameError);
      return;
    }
    if (frame === null) {
      if (conn.firstTime("unknown-frame")) {
        this.logger.warn(
          { worker: conn.name, frame: data.slice(0, 200) },
          "ignoring an unknown iii frame type",
        );
      }
      return;
    }
    this.dispatch(conn, frame);
  }

  /** Everything the connection registered goes at once; calls waiting on it fail with invocation_stopped. */
  detach(conn: WorkerConnection): void {
    if (conn.closed) return;
    conn.closed = true;
    this.connections.delete(conn.id);
    this.functions.releaseAll(conn);
    conn.failPending();
    for (const id of [...conn.triggers]) this.engine.unregisterTrigger(id);
    conn.triggers.clear();
    for (const type of [...conn.triggerTypes]) this.withdrawType(conn, type);
    this.engine.removeWorkerInfo(conn.id);
    this.workersAvailable.emit("worker_disconnected", conn.id);
  }

  closeAll(): void {
    for (const conn of [...this.connections.values()]) {
      this.detach(conn);
      conn.socket.terminate();
    }
  }

  private dispatch(conn: WorkerConnection, frame: InboundFrame): void {
    switch (frame.type) {
      case "invokefunction":
        handleInvoke(this.invocations, conn, frame);
        break;
      case "invocationresult":
        conn.settle(frame.invocation_id, frame.result, frame.error);
        break;
      case "registerfunction":
        this.registerFunction(conn, frame);
        break;
      case "unregisterfunction":
        this.functions.unregister(conn, frame.id);
        break;
      case "registertriggertype":
        this.registerTriggerType(conn, frame);
        break;
      case "unregistertriggertype":
        if (this.providers.get(frame.id) === conn) this.withdrawType(conn, frame.id);
        break;
      case "registertrigger":
        this.registerTrigger(conn, frame);
        break;
      case "unregistertrigger":
        this.unregisterTrigger(conn, frame.id);
        break;
      case "triggerregistrationresult":
        this.triggerRefused(conn, frame);
        break;
      case "reattach":
        this.reattach(conn, frame);
        break;
      case "ping":
        conn.send({ type: "pong" });
        break;
      default:
        // pong and registerservice (SDK 0.11) need nothing.
        break;
    }
  }

  private registerFunction(conn: WorkerConnection, frame: Frame<"registerfunction">): void {
    // Only what the engine uses is kept (not the frame's formats): a registration lives as long as its worker.
    const { id, description, metadata } = frame;
    const refusal =
      frame.invocation !== undefined && frame.invocation !== null
        ? "HTTP-invoked functions (registerFunction with a URL) are not supported; register a handler"
        : this.functions.register(conn, { id, description, metadata });
    if (refusal) this.reject(conn, { function_id: id, message: refusal });
  }

  private registerTriggerType(conn: WorkerConnection, frame: Frame<"registertriggertype">): void {
    const current = this.providers.get(frame.id);
    if (!current && this.engine.triggers.hasType(frame.id)) {
      this.reject(conn, { message: `Trigger type ${frame.id} is provided by the engine` });
      return;
    }
    if (!conn.triggerTypes.has(frame.id) && conn.triggerTypes.size >= this.limits.maxTriggerTypesPerWorker) {
      this.reject(conn, {
        message: `Worker ${conn.name} already provides ${conn.triggerTypes.size} trigger types`,
      });
      return;
    }
    if (current === conn) return;
    // Last provider wins, as in iii; the bindings move to it (parked, then replayed to the new provider)
    // and the previous provider, still connected, is told to let go of each, so nothing fires twice.
    if (current) {
      for (const record of this.engine.triggers.list()) {
        if (record.type === frame.id)
          current.send({ type: "unregistertrigger", id: record.id, trigger_type: frame.id });
      }
      this.withdrawType(current, frame.id);
    }
    this.providers.set(frame.id, conn);
    conn.triggerTypes.add(frame.id);
    this.engine.registerTriggerType(new RemoteTriggerType(frame.id, frame.description, conn));
  }

  private withdrawType(conn: WorkerConnection, type: string): void {
    conn.triggerTypes.delete(type);
    if (this.providers.get(type) !== conn) return;
    this.providers.delete(type);
    this.engine.unregisterTriggerType(type);
  }

  private registerTrigger(conn: WorkerConnection, frame: Frame<"registertrigger">): void {
    const { id, trigger_type: type, function_id } = frame;
    const existing = this.engine.triggers.get(id);
    let refusal: string | undefined;
    if (existing && existing.worker !== conn.id) refusal = `Trigger id ${id} belongs to another worker`;
    else if (!conn.triggers.has(id) && conn.triggers.size >= this.limits.maxTriggersPerWorker) {
      refusal = `Worker ${conn.name} already registered ${conn.triggers.size} triggers (the limit)`;
    } else {
      refusal =
        oversized(`Trigger ${id}`, { config: frame.config, metadata: frame.metadata }, this.limits) ??
        (type === "http" ? overlappedRoute(frame.config, this.engine.triggers.list(), conn.id) : undefined);
    }
    if (!refusal) {
      try {
        this.engine.registerTrigger(conn.id, {
          id,
          type,
          function_id,
          config: triggerConfig(type, frame.config),
          metadata: frame.metadata,
        });
        conn.triggers.add(id);
        return;
      } catch (error) {
        refusal = (error as Error).message;
      }
    }
    this.logger.warn(
      { worker: conn.name, trigger: id, type, reason: refusal },
      "trigger registration refused",
    );
    conn.send({
      type: "triggerregistrationresult",
      id,
      trigger_type: type,
      function_id,
      error: { code: "trigger_registration_failed", message: refusal },
    });
  }

  private unregisterTrigger(conn: WorkerConnection, id: string): void {
    // Unlike iii, a worker can remove only the bindings it registered.
    if (!conn.triggers.has(id)) return;
    conn.triggers.delete(id);
    this.engine.unregisterTrigger(id);
  }

  /** A provider refused a binding: park it and tell the worker that registered it. */
  private triggerRefused(conn: WorkerConnection, frame: Frame<"triggerregistrationresult">): void {
    const record = this.engine.triggers.get(frame.id);
    if (!frame.error || !record || this.providers.get(record.type) !== conn) return;
    this.engine.triggers.park(frame.id);
    this.logger.warn(
      { trigger: frame.id, type: record.type, error: frame.error },
      "trigger provider refused a binding",
    );
    this.connections.get(record.worker)?.send({
      type: "triggerregistrationresult",
      id: frame.id,
      trigger_type: record.type,
      function_id: record.function_id,
      error: frame.error,
    });
  }

  /**
   * A reconnecting worker retires its previous connection (one the engine has not yet noticed is dead),
   * so that connection's cleanup cannot later tear down what the new one replays. A wrong token or an
   * unknown id is ignored without a reply, as in iii.
   */
  private reattach(conn: WorkerConnection, frame: Frame<"reattach">): void {
    const previous = this.connections.get(frame.previous_worker_id);
    if (!previous || previous === conn || !sameSecret(previous.reattachToken, frame.reattach_token)) return;
    this.detach(previous);
    previous.socket.terminate();
  }

  /** Resolves once subscribers have been told, so a worker re-registering in a loop hits its call limit. */
  private describe(conn: WorkerConnection, metadata: WorkerMetadata): Promise<unknown> {
    conn.metadata = metadata;
    this.engine.setWorkerInfo(conn.id, conn.info());
    return this.workersAvailable.emit("worker_metadata_updated", conn.id);
  }

  /**
   * Tells the worker a registration was refused. iii-sdk 0.22.1 ignores frame types it does not know,
   * so this is informational there (newer SDKs read `registrationrejected`); the log says it too.
   */
  private reject(conn: WorkerConnection, details: { function_id?: string; message: string }): void {
    this.logger.warn({ worker: conn.name, ...details }, "iii registration refused");
    conn.send({ type: "registrationrejected", code: "REGISTRATION_REFUSED", ...details });
  }

  private refuseFrame(conn: WorkerConnection, error: FrameError): void {
    if (conn.firstTime(`bad-frame:${error.message}`)) {
      this.logger.warn({ worker: conn.name, reason: error.message }, "refused a malformed iii frame");
    }
    if (error.invocationId) {
      conn.send({
        type: "invocationresult",
        invocation_id: error.invocationId,
        function_id: error.functionId ?? "",
        error: { code: "deserialization_error", message: error.message },
      });
    }
  }
}

/**
 * Bindings from workers speak iii: an http trigger gets iii's request envelope and response mapping,
 * and `subscribe` ignores `condition_function_id` as iii does.
 */
function triggerConfig(type: string, config: unknown): unknown {
  if (config === null || typeof config !== "object" || Array.isArray(config)) return config;
  if (type === "http") return { ...config, envelope: "iii" };
  if (type === "subscribe") {
    const { condition_function_id: _ignored, ...rest } = config as Record<string, unknown>;
    return rest;
  }
  return config;
}
