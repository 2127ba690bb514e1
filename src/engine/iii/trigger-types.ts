import type { Logger } from "../../shared/logger.ts";
import { systemPrincipal, type TriggerFn, type TriggerRecord, type TriggerTypeProvider } from "../types.ts";
import type { WorkerConnection } from "./connection.ts";

/**
 * A trigger type provided by a worker: bindings are forwarded to it as registertrigger frames and it
 * answers with triggerregistrationresult (only failures matter).
 */
export class RemoteTriggerType implements TriggerTypeProvider {
  readonly id: string;
  readonly description: string;
  readonly provider: WorkerConnection;

  constructor(id: string, description: string, provider: WorkerConnection) {
    this.id = id;
    this.description = description;
    this.provider = provider;
  }

  register(record: TriggerRecord): void {
    this.provider.send({
      type: "registertrigger",
      id: record.id,
      trigger_type: this.id,
      function_id: record.function_id,
      config: record.config,
      ...(record.metadata === undefined ? {} : { metadata: record.metadata }),
    });
  }

  unregister(record: TriggerRecord): void {
    this.provider.send({ type: "unregistertrigger", id: record.id, trigger_type: this.id });
  }
}

export type WorkerEvent = "worker_connected" | "worker_disconnected" | "worker_metadata_updated";

/** `engine::workers-available`: bound functions hear of workers connecting, leaving and describing themselves. */
export class WorkersAvailableTriggerType implements TriggerTypeProvider {
  readonly id = "engine::workers-available";
  readonly description = "Runs the function when a worker connects, disconnects or updates its metadata";
  private readonly bindings = new Map<string, TriggerRecord>();
  private readonly trigger: TriggerFn;
  private readonly logger: Logger;

  constructor(trigger: TriggerFn, logger: Logger) {
    this.trigger = trigger;
    this.logger = logger;
  }

  register(record: TriggerRecord): void {
    this.bindings.set(record.id, record);
  }

  unregister(record: TriggerRecord): void {
    this.bindings.delete(record.id);
  }

  /** Tells every subscriber; resolves when all have answered (failures are logged, never thrown). */
  emit(event: WorkerEvent, workerId: string): Promise<unknown> {
    const calls = [...this.bindings.values()].map((record) =>
      this.trigger({
        function_id: record.function_id,
        payload: { event, worker_id: workerId },
        metadata: record.metadata,
        auth: systemPrincipal,
      }).catch((error) => this.logger.warn({ err: error, event }, "workers-available subscriber failed")),
    );
    return Promise.all(calls);
  }
}
