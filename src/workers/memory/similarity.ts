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
  return (content) => score(asked, wordsOf(content));
}

function score(asked: string[], held: Set<string>): number {
  if (asked.length === 0 || held.size === 0) return 0;
  const found = asked.filter((term) => held.has(term) || [...held].some((word) => related(term, word)));
  if (found.length === 0) return 0;
  const coverage = found.length / asked.length;
  const precision = Math.min(1, found.length / held.size);
  return round(coverage * (0.5 + 0.5 * precision));
}

function related(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return short.length >= 4 && long.startsWith(short);
}

const round = (value: number) => Math.round(value * 1e6) / 1e6;
