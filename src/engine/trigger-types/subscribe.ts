import { z } from "zod";
import { badRequest, describeZodError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import { systemPrincipal, type TriggerFn, type TriggerRecord, type TriggerTypeProvider } from "../types.ts";

export const subscribeConfig = z.strictObject({ topic: z.string().min(1).max(256) });

/** Carries published messages to the nodes that run subscribers (in-process, or PostgreSQL NOTIFY). */
export interface PubSubBus {
  publish(topic: string, data: unknown): Promise<void>;
  onMessage(listener: (topic: string, data: unknown) => void): void;
  close(): Promise<void>;
}

export class LocalBus implements PubSubBus {
  private listeners: Array<(topic: string, data: unknown) => void> = [];
  async publish(topic: string, data: unknown): Promise<void> {
    for (const listener of this.listeners) listener(topic, data);
  }
  onMessage(listener: (topic: string, data: unknown) => void): void {
    this.listeners.push(listener);
  }
  async close(): Promise<void> {
    this.listeners = [];
  }
}

/** `subscribe` triggers: every subscriber of a topic gets the published `data` as its payload. */
export class SubscribeTriggerType implements TriggerTypeProvider {
  readonly id = "subscribe";
  readonly description = "Runs the function for each message published to {topic}";
  private readonly byTopic = new Map<string, Map<string, TriggerRecord>>();

  private readonly trigger: TriggerFn;
  private readonly logger: Logger;

  constructor(bus: PubSubBus, trigger: TriggerFn, logger: Logger) {
    this.trigger = trigger;
    this.logger = logger;
    bus.onMessage((topic, data) => this.deliver(topic, data));
  }

  register(record: TriggerRecord): void {
    const parsed = subscribeConfig.safeParse(record.config);
    if (!parsed.success) throw badRequest(`subscribe trigger config: ${describeZodError(parsed.error)}`);
    const { topic } = parsed.data;
    let subscribers = this.byTopic.get(topic);
    if (!subscribers) {
      subscribers = new Map();
      this.byTopic.set(topic, subscribers);
    }
    subscribers.set(record.id, record);
  }

  unregister(record: TriggerRecord): void {
    const topic = (record.config as { topic?: string }).topic ?? "";
    this.byTopic.get(topic)?.delete(record.id);
  }

  private deliver(topic: string, data: unknown): void {
    const subscribers = this.byTopic.get(topic);
    if (!subscribers) return;
    // A snapshot: a handler runs synchronously up to its first await and may (re)register subscriptions.
    for (const record of [...subscribers.values()]) {
      // Events are delivered as the system: the local bus runs inside the publisher's call, the
      // PostgreSQL bus outside any call, and subscribers must see the same either way.
      const call = {
        function_id: record.function_id,
        payload: data,
        action: { type: "void" as const },
        auth: systemPrincipal,
      };
      this.trigger(call).catch((error) =>
        this.logger.warn(
          { err: error, topic, functionId: record.function_id },
          "subscriber could not be called",
        ),
      );
    }
  }
}
