/** A query's first 32 distinct terms count; the rest are ignored (bounds the cost of a search). */
export const MAX_QUERY_TERMS = 32;
/** Longer words cannot be real search terms (and PostgreSQL refuses words over 2047 bytes in a query). */
export const MAX_TERM_LENGTH = 128;

/** A word: a run of letters, digits and combining marks. Everything else separates words. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * English stop words, PostgreSQL's list (`english.stop`, from Snowball): the 'english' configuration
 * leaves them out of every index and query there, and SQLite leaves them out of queries, so both
 * backends match alike and a question's "what did the" never makes every document a candidate.
 */
const STOP_WORDS = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
  herself it its itself they them their theirs themselves what which who whom this that these those am is
  are was were be been being have has had having do does did doing a an the and but if or because as until
  while of at by for with about against between into through during before after above below to from up
  down in out on off over under again further then once here there when where why how all any both each
  few more most other some such no nor not only own same so than too very s t can will just don should now`.split(
    /\s+/,
  ),
);

/**
 * The search terms of a free-text query: its distinct words, lower-cased, in order of appearance,
 * without stop words (a query of stop words only has no terms and finds nothing). Terms hold only
 * letters, digits and marks, so quoted they are plain strings to both FTS5 and PostgreSQL's
 * to_tsquery: no input can form an operator, a column filter or a syntax error.
 */
export function queryTerms(query: string): string[] {
  return [...wordsOf(query, MAX_QUERY_TERMS)];
}

/** Every distinct word of a text as a query would see it (lower-cased, stop words left out). */
export function wordsOf(text: string, max = Number.POSITIVE_INFINITY): Set<string> {
  const terms = new Set<string>();
  for (const [word] of text.matchAll(WORD)) {
    const term = word.toLowerCase();
    if (term.length > MAX_TERM_LENGTH || STOP_WORDS.has(term)) continue;
    terms.add(term);
    if (terms.size === max) break;
  }
  return terms;
}
