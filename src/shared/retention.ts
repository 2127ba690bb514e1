import { z } from "zod";
import type { ListedRecord, StateClient } from "../engine/state/client.ts";
import { encodeCursor } from "../engine/state/keys.ts";
import type { WorkerClient } from "../engine/worker-client.ts";
import { requireAdmin } from "./access.ts";
import { nowMs } from "./clock.ts";

/**
 * Retention of finished work (AGENTOS_*_RETENTION_DAYS): finished workflow runs, ended swarms and
 * superseded knowledge-graph versions older than a number of days are deleted by a periodic sweep of
 * the serving process. 0 days keeps everything forever (the default: deleting users' data is opt-in).
 */
export const DAY_MS = 86_400_000;
/** Records one chunk of a sweep reads (one state call) before it deletes what it found old in them. */
export const RETENTION_CHUNK = 500;
/** The sweeps' schedule: once an hour (six-field cron), and once when the serving process starts. */
export const RETENTION_CRON = "0 17 * * * *";

/** The instant before which finished work is old enough to delete; null when retention is off (0 days). */
export function retentionCutoff(days: number, now: number): number | null {
  return days > 0 ? now - days * DAY_MS : null;
}

/** Whether an end time lies before the cutoff; a missing or unreadable time never does (kept, not guessed). */
export function endedBefore(endedAt: string | number | null | undefined, cutoff: number): boolean {
  const ms = typeof endedAt === "string" ? Date.parse(endedAt) : endedAt;
  return typeof ms === "number" && Number.isFinite(ms) && ms < cutoff;
}

/** The creation time in a `<prefix>-<uuid v7>` id (shared/ids.ts); undefined for any other id. */
export function idTime(key: string): number | undefined {
  const match = /^[^-]+-([0-9a-f]{8})-([0-9a-f]{4})-7/.exec(key);
  return match ? Number.parseInt(`${match[1]}${match[2]}`, 16) : undefined;
}

/** The key every `<prefix>-<uuid v7>` id made up to `ms` sorts at or before (12 hex digits of time). */
function timeBound(prefix: string, ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${prefix}-${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}

/**
 * The records of a scope keyed by `<prefix>-<uuid>` ids that may have been created before `cutoff`, in
 * key order, a page at a time. uuid v7 ids sort by creation time: at the first one made at or after the
 * cutoff, the ids made from then until now (the retained window, most of a busy scope) are skipped in
 * one step instead of read. Ids of other forms (uuid v4, written before ids carried their time) sort
 * anywhere, so the read goes on past the window for those: only the few whose random first digits fall
 * inside the window's range are never seen (about one in 10^5 for a month's window).
 */
export async function* mayBeOlderThan<T>(
  state: StateClient,
  scope: string,
  prefix: string,
  cutoff: number,
  now: number,
): AsyncGenerator<ListedRecord<T>> {
  let cursor: string | undefined;
  let skipped = false;
  for (;;) {
    const page = await state.list<T>(scope, { limit: RETENTION_CHUNK, cursor });
    let jumpTo: string | undefined;
    for (const record of page.items) {
      const created = idTime(record.key);
      if (created !== undefined && created >= cutoff) {
        // Ids up to a day past now (clocks of a cluster differ) are all in the window: skip them once.
        if (!skipped) {
          skipped = true;
          jumpTo = timeBound(prefix, now + DAY_MS);
          if (jumpTo > record.key) break;
          jumpTo = undefined;
        }
        continue;
      }
      yield record;
    }
    if (jumpTo !== undefined) cursor = encodeCursor(jumpTo);
    else if (page.nextCursor) cursor = page.nextCursor;
    else return;
    await yieldToOthers();
  }
}

/**
 * Lets other work in: the embedded store answers at once, so a sweep's chunk of reads and deletes
 * otherwise held every request of the process until it ended.
 */
export function yieldToOthers(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * One sweep at a time per process (the cron tick and the start-up pass must not overlap): a call while
 * one runs shares its result.
 */
export function singleFlight<T>(work: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => {
    running ??= work().finally(() => {
      running = undefined;
    });
    return running;
  };
}

export interface RetentionSweep {
  /** `<group>::sweep_retention` */
  id: string;
  /** What it deletes, for its description. */
  what: string;
  /** Days kept (0: forever, and no sweep is scheduled). */
  days: number;
  /** False in a process that does not serve the data (a CLI command): nothing is scheduled. */
  background: boolean;
  /** Deletes what finished before `cutoff`; returns how many it deleted. */
  sweep: (cutoff: number, now: number) => Promise<number>;
  warn?: (message: string) => void;
}

/**
 * Registers a retention sweep as an internal function (admin only), and in the serving process with a
 * retention set, runs it once at start and then on RETENTION_CRON (in a cluster, cron claims run each
 * tick on one node).
 */
export function registerRetention(worker: WorkerClient, options: RetentionSweep): void {
  const run = singleFlight(async () => {
    const now = nowMs();
    const cutoff = retentionCutoff(options.days, now);
    return { deleted: cutoff === null ? 0 : await options.sweep(cutoff, now) };
  });
  worker.registerFunction(
    {
      id: options.id,
      description: `Delete ${options.what} older than the retention (cron, internal): {deleted}`,
      input: z.object({}).passthrough(),
      output: z.object({ deleted: z.number() }),
      metadata: { internal: true },
    },
    async (_input, ctx) => {
      requireAdmin(ctx);
      return run();
    },
  );
  if (!options.background || options.days <= 0) return;
  worker.registerTrigger({
    type: "cron",
    function_id: options.id,
    config: { expression: RETENTION_CRON },
  });
  // After every worker has registered (a sweep may call another worker, the realms').
  setImmediate(() => {
    run().catch((error: unknown) => options.warn?.(`${options.id} failed: ${(error as Error).message}`));
  });
}
