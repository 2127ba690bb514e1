/**
 * A deterministic stand-in for an embedding model, pure and dependency-free (the fake OpenAI server and
 * the benchmarks use it): a hashed bag of words. Each word, lower-cased, stop words dropped and crudely
 * stemmed ("meetings" and "meeting" are one word), adds ±1 at a position its hash picks; the vector is
 * then scaled to length 1. Texts sharing content words point the same way (a paraphrase that keeps the
 * words scores high; one that changes them does not, as with a real model's weaker cases), and the same
 * text always gives the same vector. A small lexicon (LEXICON) adds a concept to a few words, so the
 * paraphrase tests have pairs that share meaning and no word.
 */

export const HASHED_DIMENSIONS = 256;

const STOP_WORDS = new Set(
  `a an the and or but if of to in on at by for with from as is are was were be been being it its this that
  these those i me my we our you your he him his she her they them their what which who whom do does did
  have has had not no so than too very can will would should could just about into over after before
  there here then when where why how all any each some such only own same other more most`
    .trim()
    .split(/\s+/),
);

/**
 * The test lexicon: a word (stemmed) also counts as the concepts listed, so a few paraphrases that share
 * no word still share meaning, as they would for a real model ("my car is red" and "what colour is my
 * automobile?": car and colour on both sides). Small and explicit on purpose: tests name their pairs.
 */
const LEXICON: Record<string, readonly string[]> = {
  automobile: ["car"],
  auto: ["car"],
  vehicle: ["car"],
  color: ["colour"],
  red: ["colour"],
  blue: ["colour"],
  green: ["colour"],
  yellow: ["colour"],
  physician: ["doctor"],
  puppy: ["dog"],
  canine: ["dog"],
};

/** The words that count: lower case, letters and digits, no stop words, plural and tense endings cut, lexicon concepts added. */
export function contentWords(text: string): string[] {
  const all = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const content = all.filter((word) => !STOP_WORDS.has(word));
  const words = (content.length > 0 ? content : all).map(stem);
  return words.flatMap((word) => [word, ...(LEXICON[word] ?? [])]);
}

function stem(word: string): string {
  if (word.length <= 4) return word;
  if (word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.endsWith("ing") && word.length > 5) return word.slice(0, -3);
  if (word.endsWith("ed") && word.length > 4) return word.slice(0, -2);
  if (word.endsWith("es") && /(ss|sh|ch|x)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** FNV-1a, 32 bits. */
function hash(text: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The text's vector: `dimensions` long, length 1 (a text without letters or digits gives the first axis). */
export function hashedEmbedding(text: string, dimensions: number = HASHED_DIMENSIONS): Float32Array {
  const vector = new Float32Array(dimensions);
  for (const word of contentWords(text)) {
    const position = hash(word) % dimensions;
    vector[position] = (vector[position] ?? 0) + (hash(word, 0x9747b28c) & 1 ? 1 : -1);
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  if (norm === 0) {
    vector[0] = 1;
    return vector;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) vector[i] = (vector[i] ?? 0) * scale;
  return vector;
}

/** What the fake counts as a text's tokens: its whitespace-separated words (at least one). */
export function fakeTokenCount(text: string): number {
  return Math.max(1, text.split(/\s+/).filter(Boolean).length);
}

/** Cosine similarity; 0 when either vector is all zeros. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}
