import type { MaybePromise } from "../../shared/maybe-promise.ts";
import { type GcraDecision, gcra } from "./gcra.ts";

export interface RateLimitStore {
  consume(key: string, now: number, limit: number, periodMs: number): MaybePromise<GcraDecision>;
}

const SWEEP_EVERY = 10_000;

/** In-process TATs (embedded mode). Decisions are synchronous, so no two requests race on one key. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly tats = new Map<string, number>();
  private writes = 0;

  consume(key: string, now: number, limit: number, periodMs: number): GcraDecision {
    const decision = gcra(this.tats.get(key), now, limit, periodMs);
    if (decision.allowed) {
      this.tats.set(key, decision.tat);
      if (++this.writes % SWEEP_EVERY === 0) this.sweep(now);
    }
    return decision;
  }

  /** A TAT in the past carries no information (a fresh client starts at now), so it can go. */
  private sweep(now: number): void {
    for (const [key, tat] of this.tats) if (tat <= now) this.tats.delete(key);
  }
}
