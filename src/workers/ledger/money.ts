/**
 * Cents may carry fractions (an LLM call costs fractions of a cent). They are kept to 6 decimal
 * places, rounded after every addition so binary floating point does not drift over many spends.
 */
export function round6(cents: number): number {
  return Math.round(cents * 1e6) / 1e6;
}

/** Running totals count integer micro-cents: state::update increments them exactly (below 2^53). */
export function toMicros(cents: number): number {
  return Math.round(cents * 1e6);
}

export function fromMicros(micros: number): number {
  return round6(micros / 1e6);
}

/** Budgets reset at the start of each UTC calendar month (DESIGN §5). */
export function monthStartIso(ms: number): string {
  const date = new Date(ms);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)).toISOString();
}

/** The `YYYY-MM` (UTC) a moment belongs to: the key of the per-month totals. */
export function periodKey(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}
