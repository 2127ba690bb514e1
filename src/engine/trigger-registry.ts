import { AppError, badRequest } from "../shared/errors.ts";
import type { Logger } from "../shared/logger.ts";
import type { TriggerRecord, TriggerTypeProvider } from "./types.ts";

/**
 * Trigger bindings and the types that run them. A binding of a type that is not registered yet is
 * parked and activated when the type appears, so workers may start in any order.
 */
export class TriggerRegistry {
  private readonly types = new Map<string, TriggerTypeProvider>();
  private readonly active = new Map<string, TriggerRecord>();
  private readonly parked = new Map<string, TriggerRecord>();

  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  addType(provider: TriggerTypeProvider): void {
    if (this.types.has(provider.id)) throw badRequest(`Trigger type "${provider.id}" is already registered`);
    this.types.set(provider.id, provider);
    for (const record of [...this.parked.values()]) {
      if (record.type !== provider.id) continue;
      this.parked.delete(record.id);
      try {
        this.activate(provider, record);
      } catch (error) {
        this.logger.error({ err: error, trigger: record }, "parked trigger refused by its type");
      }
    }
  }

  /**
   * Withdraws a type (its provider went away). Its active bindings are parked, not dropped, and come
   * back when a provider registers the type again.
   */
  removeType(id: string): boolean {
    if (!this.types.delete(id)) return false;
    for (const record of [...this.active.values()]) if (record.type === id) this.park(record.id);
    return true;
  }

  /** Moves an active binding back to the parked ones without telling its type (which refused or left). */
  park(id: string): boolean {
    const record = this.active.get(id);
    if (!record) return false;
    this.active.delete(id);
    this.parked.set(id, record);
    return true;
  }

  hasType(id: string): boolean {
    return this.types.has(id);
  }

  get(id: string): TriggerRecord | undefined {
    return this.active.get(id) ?? this.parked.get(id);
  }

  listTypes(): TriggerTypeProvider[] {
    return [...this.types.values()];
  }

  add(record: TriggerRecord): TriggerRecord {
    if (this.active.has(record.id) || this.parked.has(record.id)) this.remove(record.id);
    const provider = this.types.get(record.type);
    if (!provider) {
      this.logger.warn({ trigger: record }, "trigger type not registered yet; binding parked");
      this.parked.set(record.id, record);
      return record;
    }
    this.activate(provider, record);
    return record;
  }

  remove(id: string): boolean {
    if (this.parked.delete(id)) return true;
    const record = this.active.get(id);
    if (!record) return false;
    this.active.delete(id);
    this.types.get(record.type)?.unregister(record);
    return true;
  }

  list(): TriggerRecord[] {
    return [...this.active.values(), ...this.parked.values()];
  }

  clear(): void {
    const byType = Map.groupBy(this.active.values(), (record) => record.type);
    this.active.clear();
    this.parked.clear();
    for (const [type, records] of byType) {
      const provider = this.types.get(type);
      if (provider?.unregisterMany) provider.unregisterMany(records);
      else for (const record of records) provider?.unregister(record);
    }
  }

  private activate(provider: TriggerTypeProvider, record: TriggerRecord): void {
    try {
      provider.register(record);
    } catch (error) {
      if (error instanceof AppError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw badRequest(`Trigger for ${record.function_id} refused by type "${record.type}": ${reason}`);
    }
    this.active.set(record.id, record);
  }
}
