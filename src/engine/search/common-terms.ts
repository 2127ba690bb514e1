/**
 * Terms too common to rank by (DESIGN §5, recall): a term found in at least half of a scope's most
 * recent entries tells its entries apart no better than no term at all (BM25's own IDF is ≤ 0 there),
 * yet ranking by it means scoring nearly every entry. So such terms are left out of the query, and a
 * query made only of them finds nothing. A scope must hold at least MIN_ENTRIES for the rule to apply,
 * so a small memory still answers a question about its one note.
 */
export const COMMON_TERM_WINDOW = 1000;
export const MIN_ENTRIES = 256;

/**
 * The terms to rank by: all of them when the window (the scope's newest entries, at most
 * COMMON_TERM_WINDOW) holds fewer than MIN_ENTRIES, else those found in fewer than half of it.
 * `found[i]` is how many window entries hold `terms[i]` (it may be capped at half).
 */
export function informativeTerms<T>(terms: T[], windowSize: number, found: number[]): T[] {
  if (windowSize < MIN_ENTRIES) return terms;
  return terms.filter((_, index) => (found[index] ?? 0) * 2 < windowSize);
}
