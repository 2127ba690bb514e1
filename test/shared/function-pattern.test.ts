import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { matchesPattern } from "../../src/shared/function-pattern.ts";

/** The pattern's meaning, as a regular expression (fine for the short strings generated here). */
function byRegex(pattern: string, id: string): boolean {
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`, "s").test(id);
}

const text = (chars: string[], maxLength: number) =>
  fc.array(fc.constantFrom(...chars), { maxLength }).map((list) => list.join(""));

describe("matchesPattern", () => {
  it("matches exactly as the pattern read as a regular expression would", () => {
    fc.assert(
      fc.property(text(["a", "b", ":", ".", "*"], 10), text(["a", "b", ":", "."], 14), (pattern, id) => {
        expect(matchesPattern(pattern, id)).toBe(byRegex(pattern, id));
      }),
      { numRuns: 5000 },
    );
  });

  it("answers the usual capability patterns", () => {
    expect(matchesPattern("tool::*", "tool::shell_exec")).toBe(true);
    expect(matchesPattern("tool::web_*", "tool::web_fetch")).toBe(true);
    expect(matchesPattern("tool::web_*", "tool::shell_exec")).toBe(false);
    expect(matchesPattern("memory::recall", "memory::recall")).toBe(true);
    expect(matchesPattern("*", "")).toBe(true);
    expect(matchesPattern("a*a", "a")).toBe(false);
  });

  it("takes no time on a pattern that makes a backtracking regex take seconds", () => {
    const pattern = `${"a*".repeat(120)}b`;
    const id = "a".repeat(256);
    // A backtracking engine needs about 10^20 steps here; this answers in microseconds. No timing
    // threshold: finishing at all is the check (the suite's timeout would catch the other).
    expect(matchesPattern(pattern, id)).toBe(false);
    expect(matchesPattern(pattern, `${id}b`)).toBe(true);
  });
});
