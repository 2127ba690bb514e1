/**
 * Generic cell rate algorithm. One number per client and class, the theoretical arrival time (TAT):
 * a request is allowed while TAT − now stays within the burst tolerance, and each allowed request
 * pushes TAT one emission interval further. `limit` requests fit in `periodMs`, all at once if need be.
 */
export interface GcraDecision {
  allowed: boolean;
  /** The TAT to store (unchanged when denied). */
  tat: number;
  limit: number;
  remaining: number;
  /** Milliseconds until a request would be allowed again (0 when allowed). */
  retryAfterMs: number;
  /** Milliseconds until the full limit is available again. */
  resetMs: number;
}

/**
 * Emission interval and burst tolerance. TATs are epoch milliseconds (~1.8e12), where sums of
 * intervals carry rounding error, so the tolerance gets a tenth of an interval of slack: without it a
 * burst of 7 per hour let only 6 through. Less than a whole interval of slack never admits an extra request.
 */
export function gcraParameters(limit: number, periodMs: number): { interval: number; tolerance: number } {
  const interval = periodMs / limit;
  return { interval, tolerance: periodMs - interval + interval / 10 };
}

/** Requests still allowed at `now` once the TAT is `tat` (counted against the tolerance, slack included). */
export function remainingAfter(tat: number, now: number, interval: number, tolerance: number): number {
  return Math.max(0, Math.floor((tolerance - (tat - now)) / interval) + 1);
}

export function gcra(
  storedTat: number | undefined,
  now: number,
  limit: number,
  periodMs: number,
): GcraDecision {
  const { interval, tolerance } = gcraParameters(limit, periodMs);
  const tat = Math.max(storedTat ?? now, now);
  if (tat - now > tolerance) {
    return {
      allowed: false,
      tat,
      limit,
      remaining: 0,
      retryAfterMs: Math.ceil(tat - now - tolerance),
      resetMs: Math.ceil(tat - now),
    };
  }
  const next = tat + interval;
  return {
    allowed: true,
    tat: next,
    limit,
    remaining: remainingAfter(next, now, interval, tolerance),
    retryAfterMs: 0,
    resetMs: Math.ceil(next - now),
  };
}
