import { queryTerms, wordsOf } from "../../engine/search/query.ts";

/**
 * How well a memory answers a query, in [0, 1], comparable across queries: coverage (the share of the
 * query's words the memory holds) times 0.5 + 0.5 × precision (the share of the memory's words that
 * are the query's). 1 is an exact match (the same words); a memory holding every query word among many
 * others scores about 0.5; one holding half of them at most 0.5; none, 0. Words are compared as search
 * sees them (lower-cased, stop words left out); a query word also matches a memory word it begins or
 * that begins it, when the shorter has at least 4 letters ("deploy" and "deployment"), as the index's
 * stemming would.
 */
export function similarity(query: string, content: string): number {
  return similarityTo(query)(content);
}

/** similarity with the query's words read once, for scoring many memories against one query. */
export function similarityTo(query: string): (content: string) => number {
  const asked = queryTerms(query);
  const heads = asked.map(headsOf);
  return (content) => score(asked, heads, wordsOf(content.slice(0, SIMILARITY_CHARS)));
}

/**
 * How much of a memory its words are read from. A recall scores hundreds of candidates, and reading
 * every word of each (32 KiB at most) held the event loop for most of a second: a memory's opening
 * says what it is about.
 */
export const SIMILARITY_CHARS = 8192;

/**
 * Each query word is looked up, never compared with every word a memory holds: a memory of 32 KiB holds
 * thousands of words, and comparing each with each query word held the event loop for seconds a recall.
 */
function score(asked: string[], heads: string[][], held: Set<string>): number {
  if (asked.length === 0 || held.size === 0) return 0;
  let found = 0;
  const left: string[] = [];
  asked.forEach((term, index) => {
    if (held.has(term) || heads[index]?.some((head) => held.has(head))) found++;
    else if (term.length >= MIN_RELATED) left.push(term);
  });
  if (left.length > 0) found += begunBy(held, left);
  if (found === 0) return 0;
  const coverage = found / asked.length;
  const precision = Math.min(1, found / held.size);
  return round(coverage * (0.5 + 0.5 * precision));
}

/** Letters the shorter of two related words has at least ("deploy" and "deployment"). */
const MIN_RELATED = 4;

/** The term's beginnings a memory word may be (at least MIN_RELATED letters, shorter than the term). */
function headsOf(term: string): string[] {
  const heads: string[] = [];
  for (let length = MIN_RELATED; length < term.length; length++) heads.push(term.slice(0, length));
  return heads;
}

/** How many of `terms` (distinct) a longer held word begins with: each held word's heads of their lengths. */
function begunBy(held: Set<string>, terms: string[]): number {
  const wanted = new Set(terms);
  const lengths = [...new Set(terms.map((term) => term.length))];
  const seen = new Set<string>();
  for (const word of held) {
    for (const length of lengths) {
      if (word.length <= length) continue;
      const head = word.slice(0, length);
      if (wanted.has(head)) seen.add(head);
    }
    if (seen.size === wanted.size) break;
  }
  return seen.size;
}

const round = (value: number) => Math.round(value * 1e6) / 1e6;
