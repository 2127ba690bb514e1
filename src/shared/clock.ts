/** The one clock. Tests replace it with setClock to make time-dependent logic deterministic. */
export interface Clock {
  now(): number;
}

const systemClock: Clock = { now: () => Date.now() };
let current: Clock = systemClock;

export function setClock(clock: Clock | null): void {
  current = clock ?? systemClock;
}

export function nowMs(): number {
  return current.now();
}

/** The last instant written out: a busy service asks for the same millisecond many times over. */
let lastIso = { ms: Number.NaN, text: "" };

export function nowIso(): string {
  const ms = current.now();
  if (ms !== lastIso.ms) lastIso = { ms, text: new Date(ms).toISOString() };
  return lastIso.text;
}
