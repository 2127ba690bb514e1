import { nowMs } from "../../shared/clock.ts";
import { newId } from "../../shared/ids.ts";
import type { Logger } from "../../shared/logger.ts";
import { isRefusal, refusalDelayMs, retryDelayMs } from "./backoff.ts";
import { type AgentWork, type FlushDeps, flushAgent, newWork, setPass } from "./embedding-flush.ts";
import { releaseScan } from "./embedding-marks.ts";

/**
 * Entries whose contents the queue holds, all agents together (32 KiB each at most). Past it, a store
 * leaves its entries to a pass over the agent's memory, which finds them in the index: stores go on
 * while the provider is down or the budget refuses, and would otherwise pile up in the process.
 */
export const MAX_HELD_ENTRIES = 2048;

/** What one flush did, for /metrics (engine telemetry): no agent ids, only counts. */
export interface QueueReport {
  embedded: number;
  failed: number;
  refused: number;
  /** Entries the provider refused on their own (marked, never sent again; see embedding-refusals.ts). */
  rejected: number;
  /** Entries known pending in this process after it. */
  pending: number;
}

export interface QueueOptions {
  /** Entries per embed call; a batch this large is sent at once (default 64). */
  batchSize?: number;
  /** How long the first pending entry of an agent waits for others (default 1 s). */
  delayMs?: number;
  /** Agents flushed at the same time (default 2). */
  concurrency?: number;
  random?: () => number;
  /** Cluster mode: passes over an agent's memory are leased to one node (see claimScan). */
  cluster?: boolean;
  logger: Logger;
  report: (report: QueueReport) => void;
}

interface Slot extends AgentWork {
  timer?: NodeJS.Timeout;
  due?: number;
  running?: Promise<void>;
  /** Asked to flush while one ran: it goes again when done. */
  again: boolean;
  failures: number;
  /** No flush before (a failure's backoff, a refusal's pause). */
  retryAt: number;
  refused: boolean;
  lastError: string | null;
  /** Another node holds the agent's pass: when to look again (its lease's end). */
  scanAt?: number;
}

/**
 * The memory worker's embedding queue (this process's part of it; marks in state are the durable part,
 * see embedding-marks.ts). Per agent: pending entries wait at most `delayMs` for company, then go in
 * batches of `batchSize`, one agent's batches one after another, `concurrency` agents at a time. A
 * failure keeps the entries and retries with backoff (1 s doubling to 60 s, jittered); a refusal
 * (budget, realm) pauses the agent for at least 60 s, or until it stores again. Nothing here ever
 * reaches a turn: it runs on timers, and reports to the logs and /metrics.
 */
export class EmbeddingQueue {
  private readonly slots = new Map<string, Slot>();
  private readonly stopping = new AbortController();
  private readonly batchSize: number;
  private readonly delayMs: number;
  private readonly concurrency: number;
  private readonly random: () => number;
  /** This process's name in scan leases (cluster mode only). */
  private readonly node: string | undefined;
  /** Agents this process has passed over (it may hold their lease): released when it stops. */
  private readonly scanned = new Set<string>();
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  private readonly deps: Omit<FlushDeps, "batchSize" | "signal">;
  private readonly options: QueueOptions;

  constructor(deps: Omit<FlushDeps, "batchSize" | "signal">, options: QueueOptions) {
    this.deps = deps;
    this.options = options;
    this.batchSize = options.batchSize ?? 64;
    this.delayMs = options.delayMs ?? 1000;
    this.concurrency = options.concurrency ?? 2;
    this.random = options.random ?? Math.random;
    this.node = options.cluster ? newId("node") : undefined;
  }

  /** Entries just stored for an agent with an embedding model. A refused agent is tried again. */
  stored(agentId: string, entries: ReadonlyArray<{ id: string; content: string }>): void {
    const slot = this.slot(agentId);
    let room = MAX_HELD_ENTRIES - this.pending();
    let left = false;
    for (const { id, content } of entries) {
      if (room-- > 0) slot.texts.set(id, content);
      else left = true;
    }
    // Those left to a pass: one from the newest entry (a pass under way goes older than these).
    if (left) setPass(slot, true);
    if (slot.refused) Object.assign(slot, { refused: false, retryAt: 0 });
    const now = nowMs();
    this.schedule(agentId, slot.texts.size >= this.batchSize ? now : now + this.delayMs);
  }

  /**
   * A pass over the agent's memory for entries without a vector (start-up, backfill, model change).
   * `ifIdle`: only when this process is not at work on the agent already (the periodic sweep).
   */
  wake(agentId: string, ifIdle = false): void {
    const busy = this.slots.get(agentId);
    if (ifIdle && busy && (busy.running || busy.timer || busy.scan || busy.texts.size > 0)) return;
    const slot = this.slot(agentId);
    setPass(slot, true);
    if (slot.refused) Object.assign(slot, { refused: false, retryAt: 0 });
    this.schedule(agentId, nowMs());
  }

  /** An entry forgotten: not embedded if it was still waiting. */
  removed(agentId: string, id: string): void {
    this.slots.get(agentId)?.texts.delete(id);
  }

  /** The agent's memory is gone: its pending work with it. */
  forget(agentId: string): void {
    const slot = this.slots.get(agentId);
    if (!slot) return;
    clearTimeout(slot.timer);
    slot.texts.clear();
    slot.scan = false;
    if (!slot.running) this.slots.delete(agentId);
  }

  /** This process's view of the agent: the last failure, when it is retried. */
  state(agentId: string): { lastError: string | null; refused: boolean; retryAt: number | null } {
    const slot = this.slots.get(agentId);
    return {
      lastError: slot?.lastError ?? null,
      refused: slot?.refused ?? false,
      retryAt: slot && slot.retryAt > nowMs() ? slot.retryAt : null,
    };
  }

  pending(): number {
    let total = 0;
    for (const slot of this.slots.values()) total += slot.texts.size;
    return total;
  }

  /** Stops every timer and abandons the requests in flight; what was pending stays marked for the next start. */
  async stop(): Promise<void> {
    this.stopping.abort(new Error("the service is stopping"));
    for (const slot of this.slots.values()) clearTimeout(slot.timer);
    for (const release of this.waiting.splice(0)) release();
    await Promise.allSettled([...this.slots.values()].map((slot) => slot.running));
    const node = this.node;
    if (node) {
      await Promise.allSettled(
        [...this.scanned].map((agentId) => releaseScan(this.deps.state, agentId, node)),
      );
    }
  }

  private slot(agentId: string): Slot {
    let slot = this.slots.get(agentId);
    if (!slot) {
      slot = { ...newWork(), again: false, failures: 0, retryAt: 0, refused: false, lastError: null };
      this.slots.set(agentId, slot);
    }
    return slot;
  }

  private schedule(agentId: string, at: number): void {
    const slot = this.slots.get(agentId);
    if (!slot || this.stopping.signal.aborted) return;
    if (slot.running) {
      slot.again = true;
      return;
    }
    const when = Math.max(at, slot.retryAt);
    if (slot.timer && slot.due !== undefined && slot.due <= when) return;
    clearTimeout(slot.timer);
    slot.due = when;
    slot.timer = setTimeout(() => this.run(agentId, slot), Math.max(0, when - nowMs()));
    slot.timer.unref();
  }

  private run(agentId: string, slot: Slot): void {
    slot.timer = undefined;
    slot.due = undefined;
    slot.again = false;
    slot.running = this.flush(agentId, slot).finally(() => {
      slot.running = undefined;
      if (this.slots.get(agentId) !== slot) return;
      if (slot.again || slot.texts.size > 0) this.schedule(agentId, nowMs());
      else if (slot.scan) this.schedule(agentId, slot.scanAt ?? nowMs());
      else if (slot.failures === 0 && !slot.refused) this.slots.delete(agentId);
    });
  }

  private async flush(agentId: string, slot: Slot): Promise<void> {
    await this.take();
    const report: QueueReport = { embedded: 0, failed: 0, refused: 0, rejected: 0, pending: 0 };
    try {
      if (this.stopping.signal.aborted) return;
      if (slot.scan && this.node) this.scanned.add(agentId);
      const { next, embedded, refused, at } = await flushAgent(
        {
          ...this.deps,
          batchSize: this.batchSize,
          signal: this.stopping.signal,
          ...(this.node ? { node: this.node } : {}),
        },
        agentId,
        slot,
      );
      report.embedded = embedded;
      if (refused) {
        report.rejected = refused.count;
        this.options.logger.warn(
          { agentId, entries: refused.count, err: refused.reason },
          "memory entries refused by the embedding provider: they stay without a vector (text recall only)",
        );
      }
      Object.assign(slot, { failures: 0, retryAt: 0, refused: false, lastError: null });
      if (next === "more") slot.again = true;
      // Another node's pass: look again when its lease runs out (it renews it while it works).
      slot.scanAt = next === "later" && at !== undefined ? at + 1000 : undefined;
      if (slot.scanAt !== undefined) slot.scan = true;
    } catch (error) {
      if (this.stopping.signal.aborted) return;
      this.failed(agentId, slot, error, report);
      slot.again = true;
    } finally {
      this.give();
      report.pending = this.pending();
      this.options.report(report);
    }
  }

  private failed(agentId: string, slot: Slot, error: unknown, report: QueueReport): void {
    const message = error instanceof Error ? error.message : String(error);
    const refused = isRefusal(error);
    const now = nowMs();
    if (refused) {
      report.refused = 1;
      Object.assign(slot, { refused: true, retryAt: now + refusalDelayMs(this.random()) });
    } else {
      report.failed = 1;
      slot.failures++;
      slot.retryAt = now + retryDelayMs(slot.failures, this.random());
    }
    // The first failure of a streak says why; the retries only at debug.
    const first = slot.lastError === null;
    slot.lastError = message;
    this.options.logger[first ? "warn" : "debug"](
      { agentId, refused, retryInMs: slot.retryAt - now, err: message },
      refused ? "memory embeddings paused: spending refused" : "memory embeddings failed; retrying",
    );
  }

  /** A place among the `concurrency` agents flushing. */
  private async take(): Promise<void> {
    if (this.active < this.concurrency || this.stopping.signal.aborted) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
  }

  private give(): void {
    this.active--;
    this.waiting.shift()?.();
  }
}
