/**
 * Text as people write it, for the memory benchmarks at scale: words drawn from a ranked vocabulary
 * with a Zipf distribution (the word of rank r is drawn with probability ∝ 1 / r^s), so stop words and a
 * few dozen content words are very common and most words are rare. The vocabulary is English stop
 * words, then everyday and work words, then a long tail of made-up words (names, jargon, codes).
 */

const split = (text: string) => text.trim().split(/\s+/);

/** The most common English words, most common first (mostly stop words). */
const FUNCTION_WORDS = split(`the of and to a in is it you that he was for on are with as i his they be at one
  have this from or had by not but what some we can out other were all there when up use your how said an each
  she which do their if will way about many then them would so these her him has more could go come did no my
  than been who its now just over also after our me any into only`);

/** Everyday and work words, roughly most common first. */
const CONTENT_WORDS = split(`user meeting time team work project email today customer issue report plan call
  week data update need new question idea note problem change release server price order account budget
  schedule design review document list task client manager service file test version feature payment code
  office contract invoice ticket support product deadline database network system policy sale market event
  travel flight hotel dinner lunch coffee doctor family friend birthday weekend holiday vacation school
  deploy bug fix build migration backup dashboard cluster pipeline alert outage incident latency cache queue
  index schema query replica snapshot kubernetes docker terraform registry repository branch merge review
  benchmark metric log trace token password certificate domain firewall router laptop printer license
  subscription renewal refund shipment warehouse supplier catalog pricing discount campaign webinar podcast
  article survey feedback complaint interview candidate offer salary bonus payroll insurance lease mortgage
  receipt expense tax audit compliance security privacy legal partner vendor investor board hire onboarding
  training workshop conference presentation slide spreadsheet memo agenda minutes roadmap milestone sprint
  standup retro estimate priority risk approval signature draft final quarterly monthly annual weekly daily
  morning evening tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday january february
  march april may june july august september october november december berlin tokyo london paris york
  restaurant recipe allergy medication marathon bicycle garden kitchen apartment car train bus airport
  ticket passport visa gift anniversary wedding concert movie book music game phone app website login
  account profile settings notification message chat channel thread comment reply link photo video image
  storage cloud region latency throughput capacity cost revenue profit forecast target growth churn
  retention conversion funnel lead deal quote proposal negotiation renewal upgrade downgrade trial demo
  prototype experiment hypothesis result analysis model training dataset label accuracy evaluation prompt
  agent tool memory recall search ranking embedding vector context window summary transcript`);

const SYLLABLES = split(`ka ri to mo na lu ve shi pa do ren zu bel tor gan mi sa ko fe lin dra qu ax om el
  ur ix an ost ber vin cal mar pel sor`);

/** Made-up words for the long tail: every two- and three-syllable combination, in a fixed order. */
function tailWords(count: number): string[] {
  const words: string[] = [];
  for (const a of SYLLABLES)
    for (const b of SYLLABLES) {
      words.push(a + b);
      for (const c of SYLLABLES) words.push(a + b + c);
    }
  // A fixed shuffle, so that rank does not follow the alphabet.
  const pick = seeded(7);
  for (let i = words.length - 1; i > 0; i--) {
    const j = Math.floor(pick() * (i + 1));
    [words[i], words[j]] = [words[j], words[i]];
  }
  return words.slice(0, count);
}

/** The ranked vocabulary: function words, then content words, then the tail; ~20 000 words. */
export const VOCABULARY: readonly string[] = [
  ...new Set([...FUNCTION_WORDS, ...CONTENT_WORDS, ...tailWords(20_000)]),
].slice(0, 20_000);
/** Rank of the first content word (queries draw from the content words on). */
export const FIRST_CONTENT_RANK = new Set(FUNCTION_WORDS).size;
/** The Zipf exponent (about 1 in natural language). */
export const ZIPF_EXPONENT = 1.0;

/** A seeded generator of numbers in [0, 1), so every run writes and asks the same things. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    // xorshift32
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
}

/** Draws words of VOCABULARY[from, to) with probability ∝ 1 / (rank within the range)^s. */
function zipf(from: number, to: number, next: () => number): () => string {
  // Ranks count from `from`: the first word of the range is the range's most common.
  const cumulative = new Float64Array(to - from);
  let total = 0;
  for (let rank = from; rank < to; rank++) {
    total += 1 / (rank - from + 1) ** ZIPF_EXPONENT;
    cumulative[rank - from] = total;
  }
  return () => {
    const target = next() * total;
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (cumulative[mid] < target) low = mid + 1;
      else high = mid;
    }
    return VOCABULARY[from + low];
  };
}

/** Share of an entry's words that are function words (the rest are content words), as in English prose. */
const FUNCTION_SHARE = 0.45;

/**
 * Memory entries: 8 to 32 words (~20 on average), each a function word (FUNCTION_SHARE of them) or a
 * content word, each drawn by Zipf's law within its kind: the commonest content words ("user", "meeting")
 * are then in a large part of an agent's memory, as an agent's few topics are.
 */
export function entryTexts(seed: number): () => string {
  const next = seeded(seed);
  const functionWord = zipf(0, FIRST_CONTENT_RANK, next);
  const contentWord = zipf(FIRST_CONTENT_RANK, VOCABULARY.length, next);
  const word = () => (next() < FUNCTION_SHARE ? functionWord() : contentWord());
  return () => {
    const length = 8 + Math.floor(next() * 25);
    const words = Array.from({ length }, word);
    return `${words[0].charAt(0).toUpperCase()}${words[0].slice(1)} ${words.slice(1).join(" ")}.`;
  };
}

/**
 * What an agent asks its memory: two to five content words drawn by the same law as the entries' (so
 * the common ones, found in a large part of the entries, come up often), half of them in a question.
 */
export function queryTexts(seed: number): () => string {
  const next = seeded(seed);
  const word = zipf(FIRST_CONTENT_RANK, VOCABULARY.length, next);
  return () => {
    const words = Array.from({ length: 2 + Math.floor(next() * 4) }, word);
    return next() < 0.5 ? `what did we say about the ${words.join(" ")}?` : words.join(" ");
  };
}
