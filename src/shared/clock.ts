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

export function nowIso(): string {
  return new Date(current.now()).toISOString();
}
