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

export function gcra(
  storedTat: number | undefined,
  now: number,
  limit: number,
  periodMs: number,
): GcraDecision {
  const interval = periodMs / limit;
  const tolerance = periodMs - interval;
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
    remaining: Math.max(0, Math.floor((periodMs - (next - now)) / interval)),
    retryAfterMs: 0,
    resetMs: Math.ceil(next - now),
  };
}
