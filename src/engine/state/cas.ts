import { AppError, isAppError } from "../../shared/errors.ts";
import type { StateClient, WriteOutcome } from "./client.ts";

const MAX_ATTEMPTS = 64;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const isConflict = (error: unknown): boolean => isAppError(error) && error.code === "conflict";

/** What `change` sees: the stored value (null when absent) and its version (0 when absent). */
export interface CasCurrent<T> {
  value: T | null;
  version: number;
}

export interface CasOptions {
  /** The caller's expected version: a mismatch fails at once with 409 instead of retrying. */
  expectedVersion?: number;
  /** Message of that 409 (default: the store's version-conflict message). */
  staleMessage?: (current: number) => string;
}

/** Serialises work per key inside this process, so local writers of one record queue instead of retrying. */
const queues = new Map<string, Promise<unknown>>();

export function serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(work, work);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return run;
}

/**
 * The one read-modify-write of a record: read it with its version, compute the next value, and write
 * it only if nobody wrote in between (compare-and-swap); on a conflict read again and recompute. So no
 * update is lost under concurrency, on one node or many. `change` may throw to refuse the update, and
 * returns undefined to leave the record as it is. Writers of one record in this process are queued
 * first, so contention costs retries only across nodes.
 */
export async function casUpdate<T>(
  state: StateClient,
  scope: string,
  key: string,
  change: (current: CasCurrent<T>) => T | undefined | Promise<T | undefined>,
  options: CasOptions = {},
): Promise<{ value: T | null; version: number; changed: boolean }> {
  return serialized(`${scope}\u0000${key}`, async () => {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const stored = await state.getVersioned<T>(scope, key);
      const current: CasCurrent<T> = { value: stored?.value ?? null, version: stored?.version ?? 0 };
      if (options.expectedVersion !== undefined && options.expectedVersion !== current.version) {
        throw new AppError(
          "conflict",
          options.staleMessage?.(current.version) ??
            `Version conflict on ${scope}/${key}: expected version ${options.expectedVersion}, found ${current.version}`,
        );
      }
      const next = await change(current);
      if (next === undefined) return { ...current, changed: false };
      try {
        const written: WriteOutcome<T> = await state.set(scope, key, next, current.version);
        return { value: written.new_value, version: written.version, changed: true };
      } catch (error) {
        if (!isConflict(error)) throw error;
        await pause(Math.random() * Math.min(2 ** attempt, 50));
      }
    }
    throw new AppError("unavailable", `Too much contention on ${scope}/${key}; try again`);
  });
}
