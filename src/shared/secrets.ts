import { timingSafeEqual } from "node:crypto";

/** Constant-time comparison of a presented secret with the expected one (tokens, reattach tokens). */
export function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
