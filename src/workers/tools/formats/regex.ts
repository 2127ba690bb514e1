import vm from "node:vm";
import { badRequest } from "../../../shared/errors.ts";

const MAX_MATCHES = 1000;
/**
 * The most characters the matches and their groups may hold together. Matches do not overlap, but what
 * a lookahead captures does: (?=([\s\S]*)) captures the rest of the text at every position, so 200 kB
 * of text answered 200 MB.
 */
const MAX_MATCHED_CHARS = 10_000_000;

/**
 * Runs the pattern in a separate V8 context with a timeout, so a catastrophically backtracking pattern is
 * stopped instead of blocking the service.
 */
export function testRegex({
  pattern,
  flags,
  text,
  timeoutMs,
}: {
  pattern: string;
  flags: string;
  text: string;
  timeoutMs: number;
}) {
  try {
    new RegExp(pattern, flags);
  } catch (error) {
    throw badRequest(`Invalid regular expression: ${(error as Error).message}`);
  }
  const code = `(() => {
    const re = new RegExp(pattern, flags.includes("g") ? flags : flags + "g");
    const found = [];
    let chars = 0;
    for (const m of text.matchAll(re)) {
      for (const part of m) chars += part?.length ?? 0;
      if (chars > ${MAX_MATCHED_CHARS}) return null;
      found.push({ match: m[0], index: m.index, groups: m.slice(1), named: m.groups ?? null });
      if (found.length >= ${MAX_MATCHES} || !flags.includes("g")) break;
    }
    return JSON.stringify(found);
  })()`;
  let json: string | null;
  try {
    json = vm.runInNewContext(code, { pattern, flags, text }, { timeout: timeoutMs }) as string | null;
  } catch (error) {
    if (/timed out/i.test((error as Error).message)) {
      throw badRequest(
        `The pattern ran longer than ${timeoutMs} ms on this text (catastrophic backtracking?)`,
      );
    }
    throw badRequest(`Regular expression failed: ${(error as Error).message}`);
  }
  if (json === null) {
    throw badRequest(
      `The matches and their groups hold more than ${MAX_MATCHED_CHARS} characters: narrow the pattern or the text`,
    );
  }
  const matches = JSON.parse(json) as unknown[];
  return { matched: matches.length > 0, count: matches.length, matches };
}
