/**
 * `*` matches any run of characters; everything else is literal (DESIGN.md §5 capability patterns).
 * Matched without a regular expression: the literal parts between the stars are found in order, each at
 * its first place after the one before (for `*`-only patterns the leftmost place never loses a match),
 * so a pattern like `a*a*a*…b` costs a few scans of the id, not the exponential backtracking a regex
 * engine spends on it (patterns are written by keys and agents).
 */
export function matchesPattern(pattern: string, id: string): boolean {
  if (!pattern.includes("*")) return pattern === id;
  const parts = pattern.split("*");
  const first = parts[0] as string;
  const last = parts[parts.length - 1] as string;
  if (id.length < first.length + last.length || !id.startsWith(first) || !id.endsWith(last)) return false;
  const end = id.length - last.length;
  let at = first.length;
  for (const part of parts.slice(1, -1)) {
    if (part === "") continue;
    const found = id.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}
