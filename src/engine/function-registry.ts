import { badRequest } from "../shared/errors.ts";
import type { RegisteredFunction } from "./types.ts";

const FUNCTION_ID = /^[A-Za-z0-9_.\-:]+$/;

/** Listed to callers: neither the engine's own functions nor internal ones. */
export function isDiscoverable(fn: RegisteredFunction): boolean {
  return !(fn.id.startsWith("engine::") || fn.metadata?.internal === true);
}

/** Function id → registration. Re-registering an id replaces it (last writer wins, as in iii). */
export class FunctionRegistry {
  private readonly byId = new Map<string, RegisteredFunction>();
  private readonly perWorker = new Map<string, number>();
  /** list()'s and publicIds()' answers until the next add or remove (agents ask on every turn). */
  private sorted: RegisteredFunction[] | null = null;
  private ids: string[] | null = null;

  add(fn: RegisteredFunction): RegisteredFunction {
    if (!fn.id || fn.id.length > 256 || !FUNCTION_ID.test(fn.id)) {
      throw badRequest(`Invalid function id "${fn.id}": use letters, digits and _ . - : (at most 256)`);
    }
    this.remove(fn.id);
    this.changed();
    this.byId.set(fn.id, fn);
    this.perWorker.set(fn.worker, (this.perWorker.get(fn.worker) ?? 0) + 1);
    return fn;
  }

  get(id: string): RegisteredFunction | undefined {
    return this.byId.get(id);
  }

  remove(id: string): boolean {
    const fn = this.byId.get(id);
    if (!fn) return false;
    this.changed();
    this.byId.delete(id);
    // Remote workers are keyed by connection id: an emptied entry must go, or every connection leaves one.
    const left = (this.perWorker.get(fn.worker) ?? 1) - 1;
    if (left > 0) this.perWorker.set(fn.worker, left);
    else this.perWorker.delete(fn.worker);
    return true;
  }

  /** Sorted by id; the array is shared, so callers must not change it. */
  list(): readonly RegisteredFunction[] {
    this.sorted ??= [...this.byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return this.sorted;
  }

  /** The sorted ids of the functions callers may discover (isDiscoverable). */
  publicIds(): readonly string[] {
    this.ids ??= this.list()
      .filter(isDiscoverable)
      .map((fn) => fn.id);
    return this.ids;
  }

  private changed(): void {
    this.sorted = null;
    this.ids = null;
  }

  countByWorker(worker: string): number {
    return this.perWorker.get(worker) ?? 0;
  }

  /** The workers that own at least one function. */
  workerKeys(): string[] {
    return [...this.perWorker.keys()];
  }
}
