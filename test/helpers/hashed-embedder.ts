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
 * The test lexicon: a word (stemmed, as `plainWords` gives it) also counts as the concepts listed, so
 * paraphrases that share no word still share meaning, as they would for a real model ("my car is red"
 * and "what colour is my automobile?": car and colour on both sides). Small and explicit on purpose:
 * tests name their pairs. The second part holds the synonyms of the retrieval benchmark's paraphrase
 * pairs (bench/retrieval.bench.ts), each mapped to its fact's word: given, not learned, so that
 * benchmark's vector numbers show the plumbing and the fusion, not a model's quality.
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
  // bench/retrieval.bench.ts: question word → its fact's word.
  nap: ["sleep"],
  legume: ["peanut"],
  ill: ["react"],
  plane: ["flight"],
  japan: ["tokyo"],
  depart: ["board"],
  spouse: ["wife"],
  born: ["birthday"],
  wireless: ["wifi"],
  secret: ["password"],
  commute: ["bus"],
  office: ["work"],
  boy: ["son"],
  sport: ["soccer"],
  weekend: ["saturday"],
  lease: ["rent"],
  payable: ["due"],
  sweeten: ["sugar"],
  espresso: ["coffee"],
  appointment: ["meet"],
  lender: ["bank"],
  notebook: ["laptop"],
  power: ["battery"],
  frighten: ["afraid"],
  girl: ["daughter"],
  lodg: ["hotel"],
  italy: ["rome"],
  machine: ["server"],
  down: ["crash"],
  like: ["favourite"],
  eat: ["food"],
  sibl: ["brother"],
  vegetarian: ["meat", "fish"],
  irs: ["tax"],
  paperwork: ["return"],
  mom: ["mother"],
  reside: ["live"],
  race: ["marathon"],
  kilometre: ["marathon"],
  irrigate: ["water"],
  terrace: ["balcony"],
  greenery: ["plant"],
  lapse: ["expire"],
  abroad: ["passport"],
  copier: ["printer"],
  upstair: ["floor"],
  chain: ["lock"],
  bike: ["bicycle"],
  wedd: ["anniversary"],
  meal: ["dinner"],
  reserv: ["book"],
  children: ["kids"],
  begin: ["start"],
  class: ["school"],
  coverage: ["insurance"],
  contract: ["policy"],
  headach: ["migraine"],
  manager: ["boss"],
  presentation: ["slide"],
  deck: ["slide"],
  backup: ["spare"],
  latchkey: ["key"],
  transfusion: ["blood"],
  group: ["type"],
  attorney: ["lawyer"],
  charge: ["fee"],
  call: ["name"],
  cat: ["kitten"],
  wage: ["salary"],
  deposit: ["paid"],
  lift: ["elevator"],
  repair: ["service"],
  language: ["spanish"],
  study: ["learn"],
  fitness: ["gym"],
  subscription: ["membership"],
  granny: ["grandmother"],
  teeth: ["dentist"],
  checkup: ["visit"],
  herb: ["cilantro"],
  dislike: ["hate"],
  scrum: ["standup"],
  daily: ["day"],
  mobile: ["phone"],
  contact: ["number"],
  warmth: ["heat"],
  winter: ["january"],
  pay: ["bill"],
  infusion: ["tea"],
  sip: ["drink"],
  nearby: ["neighbour"],
  purse: ["wallet"],
  miss: ["lost"],
  nanny: ["babysitter"],
  arrive: ["come"],
  vision: ["eyesight"],
  deteriorat: ["worse"],
  fridge: ["refrigerator"],
  humm: ["noise"],
  spectacle: ["glass"],
  fresh: ["new"],
  joint: ["knee"],
  ache: ["hurt"],
  bill: ["invoice"],
  late: ["overdue"],
  relative: ["cousin"],
  knot: ["marri"],
  energy: ["electricity"],
  supply: ["provider"],
  proof: ["receipt"],
  purchase: ["receipt"],
  bread: ["bakery"],
  shut: ["close"],
  tutor: ["teacher"],
  child: ["son"],
  credential: ["certificate"],
  tunnel: ["vpn"],
  refresh: ["renew"],
  genre: ["jazz"],
  kitchen: ["cook"],
};

/** The words of a text as the embedder reads them, before the lexicon: lower case, letters and digits, no stop words, plural and tense endings cut. */
export function plainWords(text: string): string[] {
  const all = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const content = all.filter((word) => !STOP_WORDS.has(word));
  return (content.length > 0 ? content : all).map(stem);
}

/** The words that count: plainWords with the lexicon's concepts added. */
export function contentWords(text: string): string[] {
  return plainWords(text).flatMap((word) => [word, ...(LEXICON[word] ?? [])]);
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
  return unitLength(vector);
}

/** The vector scaled to length 1 in place (a zero vector becomes the first axis). */
export function unitLength(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  if (norm === 0) {
    vector[0] = 1;
    return vector;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] ?? 0) * scale;
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
