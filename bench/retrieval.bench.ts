import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type AgentOS, createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import { MIN_RESCORE, passSizes, RESCORE_PER_HIT } from "../src/engine/vector/scan.ts";
import { encodeBase64Vector } from "../src/llm/openai/embeddings.ts";
import { setClock } from "../src/shared/clock.ts";
import { startFakeOpenAI } from "../test/helpers/fake-openai.ts";
import {
  contentWords,
  cosine,
  fakeTokenCount,
  hashedEmbedding,
  plainWords,
  unitLength,
} from "../test/helpers/hashed-embedder.ts";
import { entryTexts, queryTexts, seeded } from "./memory-words.ts";
import { percentile, tempDir } from "./util.ts";

const MODEL = "text-embedding-3-small";
const DIMENSIONS = 1536;
const DISTRACTORS = 2_000;
const TOP = 5;
const BIG = 100_000;
const STORE_BATCH = 100;
const QUERIES = 500;
const WARM_UP = 50;
const TARGET_P99_MS = 20;
/** memory::recall's default limit, and how many candidates each list of a hybrid recall brings per result (recall.ts). */
const RECALL_LIMIT = 10;
const OVER_FETCH = 4;
/** The speed part's entries are created over the year before now. */
const SPAN_MS = 365 * 24 * 60 * 60 * 1000;
/** How long the queue may take to embed the 100 000 entries before the bench stops waiting. */
const EMBED_DEADLINE_MS = 180_000;
/** The SQLite tables (and their indexes) that hold vectors (src/engine/vector/sqlite.ts). */
const VECTOR_TABLES = ["vector_codes", "vector_data", "sqlite_autoindex_vector_codes_1", "vector_codes_seq"];

/**
 * A fact and a question it answers that shares no word with it (as the hashed embedder reads words:
 * stop words out, plural and tense endings cut): found by meaning or not at all. The hashed embedder's
 * lexicon (test/helpers/hashed-embedder.ts) gives each pair's synonyms.
 */
const PARAPHRASES: ReadonlyArray<readonly [fact: string, question: string]> = [
  ["My car is red.", "What colour is my automobile?"],
  ["The dog sleeps in the laundry room.", "Where does the puppy nap?"],
  ["My physician is Dr. Okafor.", "Who is my doctor?"],
  ["I react badly to peanuts.", "Which legume makes me ill?"],
  ["My flight to Tokyo boards at 9pm.", "When does the plane to Japan depart?"],
  ["My wife's birthday is on March 3.", "When was my spouse born?"],
  ["The wifi password is tangerine42.", "What is the secret for the wireless network?"],
  ["I take the bus to work.", "How do I commute to the office?"],
  ["My son plays soccer on Saturdays.", "Which sport does my boy do at the weekend?"],
  ["Our rent is due on the first of the month.", "When is the apartment lease payable?"],
  ["I drink my coffee without sugar.", "Do I sweeten my espresso?"],
  ["The meeting with the bank is on Thursday.", "When is the appointment with the lender?"],
  ["My laptop battery is dying.", "What is wrong with the power of my notebook?"],
  ["My daughter is afraid of spiders.", "What frightens my girl?"],
  ["We booked a hotel in Rome for May.", "Where are we lodging in Italy?"],
  ["The server crashed last night.", "When did the machine go down?"],
  ["My favourite food is sushi.", "What do I like to eat most?"],
  ["Tom is my brother.", "Who is my sibling?"],
  ["I never eat meat or fish.", "Am I a vegetarian?"],
  ["The tax return is due in April.", "When must my IRS paperwork be in?"],
  ["My mother lives in Chicago.", "Where does mom reside?"],
  ["I ran my first marathon last spring.", "When did I complete a 42-kilometre race?"],
  ["The balcony plants need water every morning.", "When should I irrigate the terrace greenery?"],
  ["My passport expires in June.", "When does my ID for going abroad lapse?"],
  ["The printer on the second floor is broken.", "Which upstairs copier is out of order?"],
  ["My bicycle is locked outside the library.", "Where did I chain up my bike?"],
  ["Our anniversary dinner is booked at Luigi's.", "Where is the wedding celebration meal reserved?"],
  ["The kids' school starts at 8:15.", "What time do the children begin classes?"],
  ["My insurance policy number is 4471-B.", "What is the ID of my coverage contract?"],
  ["I get migraines when I skip breakfast.", "What gives me headaches?"],
  ["The boss wants the slides by Monday.", "When does my manager expect the presentation deck?"],
  ["I keep the spare key under the flowerpot.", "Where is my backup latchkey hidden?"],
  ["My blood type is O negative.", "Which transfusion group am I?"],
  ["The lawyer's fee is 300 dollars an hour.", "How much does the attorney charge?"],
  ["We adopted a kitten; her name is Miso.", "What do we call the new cat?"],
  ["My salary is paid on the 25th.", "When are my wages deposited?"],
  ["The elevator is out of service until Tuesday.", "When will the lift be repaired?"],
  ["I'm learning Spanish in the evenings.", "Which language am I studying?"],
  ["The gym membership renews in October.", "When does my fitness subscription roll over?"],
  ["My grandmother turns 90 next week.", "How old will granny be?"],
  ["The dentist visit is at 3pm Wednesday.", "When is my teeth checkup?"],
  ["I hate cilantro.", "Which herb do I dislike?"],
  ["Our team standup is at 9:30 every day.", "When is the daily scrum?"],
  ["My phone number changed to 555-0199.", "What is my new mobile contact?"],
  ["The heating bill was 140 euros in January.", "How much did we pay for warmth last winter?"],
  ["Our neighbour drinks chamomile tea.", "Which infusion does the family nearby sip?"],
  ["I lost my wallet at the train station.", "Where did my purse go missing?"],
  ["The babysitter comes on Tuesday evenings.", "When does the nanny arrive?"],
  ["My eyesight is getting worse.", "Is my vision deteriorating?"],
  ["The refrigerator makes a loud noise.", "Why is the fridge humming?"],
  ["I need new glasses.", "Should I buy fresh spectacles?"],
  ["My knee hurts when I run.", "Why does my leg joint ache?"],
  ["The invoice from Acme is overdue.", "Which supplier bill is late?"],
  ["My cousin is getting married in Lisbon.", "Which relative is tying the knot?"],
  ["We switched electricity provider to GreenPower.", "Who supplies our energy now?"],
  ["I keep receipts in the blue folder.", "Where do I store my proofs of purchase?"],
  ["The bakery closes at 6 on Sundays.", "When does the bread shop shut?"],
  ["My son's teacher is Mr. Alvarez.", "Who tutors my child?"],
  ["The VPN certificate must be renewed soon.", "Which credential for the private tunnel needs refreshing?"],
  ["I listen to jazz while cooking.", "What genre accompanies my time in the kitchen?"],
];

/** Controls: questions that share words with their fact, where text recall does its job. */
const CONTROLS: ReadonlyArray<readonly [fact: string, question: string]> = [
  ["The office door code is 7741.", "What is the office door code?"],
  ["Our project codename is Bluebird.", "What is the project codename?"],
  ["The staging database runs on port 5433.", "Which port does the staging database use?"],
  ["Mark's phone extension is 212.", "What is Mark's extension?"],
  ["The team offsite is in Porto in September.", "Where is the team offsite?"],
  ["The parking permit number is PK-2291.", "parking permit number"],
  ["My locker at the gym is number 48.", "Which locker is mine at the gym?"],
  ["The book club meets on the last Thursday.", "When does the book club meet?"],
  ["The quarterly budget review is with Priya.", "Who runs the quarterly budget review?"],
  ["Grandpa's clinic is on Elm Street.", "Where is grandpa's clinic?"],
  ["The spare printer toner is in the supply cabinet.", "Where is the printer toner?"],
  ["The release freeze starts on December 1.", "When does the release freeze start?"],
  ["The piano lesson is on Wednesday at five.", "When is the piano lesson?"],
  ["Dad's favourite whisky is Lagavulin.", "What is dad's favourite whisky?"],
  ["The recycling goes out on Tuesday night.", "When does the recycling go out?"],
  ["Our landlord is Mr. Petrov.", "Who is our landlord?"],
  ["The conference badge pickup is at hall B.", "Where is the conference badge pickup?"],
  ["My yoga class moved to the Friday slot.", "When is my yoga class?"],
  ["The kettle gets descaled every month.", "When does the kettle get descaled?"],
  ["The cobbler resoled my hiking boots.", "What did the cobbler resole?"],
];

const MODES = ["text", "vector", "hybrid"] as const;
type Mode = (typeof MODES)[number];

interface Recalled {
  results: Array<{ id: string; matchedBy: string[] }>;
}
interface Status {
  entries: number;
  embedded: number;
  pending: number;
  lastError: string | null;
}

/** The pairs as the bench claims them: paraphrases share no word with their fact, controls do. */
function checkPairs(): void {
  const shared = (fact: string, question: string) =>
    plainWords(fact).filter((word) => plainWords(question).includes(word));
  for (const [fact, question] of PARAPHRASES) {
    const words = shared(fact, question);
    if (words.length > 0) throw new Error(`"${question}" shares ${words.join(", ")} with "${fact}"`);
  }
  for (const [fact, question] of CONTROLS) {
    if (shared(fact, question).length === 0) throw new Error(`control "${question}" shares no word`);
  }
}

/** FNV-1a, 32 bits. */
function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The bench's stand-in: the hashed embedder's bag of words (its words and lexicon, contentWords), each
 * word a fixed pseudo-random ±1 direction over all `dims` (a random projection, seeded by the word), the
 * sum scaled to length 1. Cosines are those of the one-hot variant the tests use (shared words over the
 * geometric mean of the counts) within ~1/√dims, without its bucket collisions; and the vectors are
 * dense, as a model's are, where the one-hot ones are zero but for a few dimensions (see SPARSE_NOTE).
 */
function projectedEmbedding(text: string, dims: number): Float32Array {
  const vector = new Float32Array(dims);
  for (const word of contentWords(text)) {
    let state = fnv(word) || 1;
    for (let i = 0; i < dims; i += 32) {
      // xorshift32: 32 signs at a time.
      state ^= state << 13;
      state >>>= 0;
      state ^= state >>> 17;
      state ^= state << 5;
      state >>>= 0;
      for (let bit = 0; bit < 32 && i + bit < dims; bit++) vector[i + bit] += (state >>> bit) & 1 ? 1 : -1;
    }
  }
  return unitLength(vector);
}

/** An OpenAI-compatible `/v1/embeddings` on loopback answering projectedEmbedding (base64 when asked). */
async function startProjectedFake(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.startsWith("/v1/embeddings")) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "not found" } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        model: string;
        input: unknown;
        encoding_format?: string;
        dimensions?: number;
      };
      const inputs = (Array.isArray(body.input) ? body.input : [body.input]).map(String);
      const data = inputs.map((text, index) => {
        const vector = projectedEmbedding(text, body.dimensions ?? DIMENSIONS);
        const embedding = body.encoding_format === "base64" ? encodeBase64Vector(vector) : Array.from(vector);
        return { object: "embedding", index, embedding };
      });
      const tokens = inputs.reduce((sum, text) => sum + fakeTokenCount(text), 0);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          object: "list",
          data,
          model: body.model,
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        }),
      );
    });
  });
  // Idle connections stay open for the service's pool to reuse (Node's 5 s default would close one under
  // a request now and then: a reset, and a vector recall, which does not retry, fails).
  server.keepAliveTimeout = 600_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The service on a fresh data dir with `env`'s providers (in process: calls are engine.trigger). */
async function withService<T>(
  env: Record<string, string>,
  run: (service: AgentOS, dbFile: string) => Promise<T>,
): Promise<T> {
  const dir = tempDir();
  const service = await createAgentOS({
    ...loadConfig({
      AGENTOS_DATA_DIR: dir.path,
      AGENTOS_HOME: dir.path,
      AGENTOS_API_KEY: "bench-admin-key-0123456789",
      AGENTOS_LOG_LEVEL: "silent",
      ...env,
    }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
  });
  try {
    return await run(service, join(dir.path, "agentos.db"));
  } finally {
    await service.close();
    dir.remove();
  }
}

const caller =
  (service: AgentOS) =>
  <T>(function_id: string, payload: unknown): Promise<T> =>
    service.engine.trigger({ function_id, payload }) as Promise<T>;

async function newAgent(service: AgentOS, name: string): Promise<string> {
  const agent = await caller(service)<{ id: string }>("agent::create", {
    name,
    model: "gpt-4o",
    embeddingModel: MODEL,
  });
  return agent.id;
}

/** Polls memory::embedding_status until nothing is pending or `deadlineMs` passes. */
async function settled(service: AgentOS, agentId: string, deadlineMs: number) {
  const started = performance.now();
  for (;;) {
    const status = await caller(service)<Status>("memory::embedding_status", { agentId });
    const ms = performance.now() - started;
    if ((status.entries > 0 && status.pending === 0) || ms > deadlineMs) return { status, ms };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The memory of the quality part: DISTRACTORS generated entries with every fact at a seeded place. */
function qualityMemory(): Array<{ content: string; fact?: number }> {
  const next = entryTexts(11);
  const contents: Array<{ content: string; fact?: number }> = Array.from({ length: DISTRACTORS }, () => ({
    content: next(),
  }));
  const pick = seeded(5);
  [...PARAPHRASES, ...CONTROLS].forEach(([fact], i) => {
    contents.splice(Math.floor(pick() * (contents.length + 1)), 0, { content: fact, fact: i });
  });
  return contents;
}

const rate = (hits: readonly boolean[], from: number, to: number) => {
  const n = hits.slice(from, to).filter(Boolean).length;
  return `${String(n).padStart(2)}/${to - from} = ${(n / (to - from)).toFixed(2)}`;
};

function row(label: string, hits: readonly boolean[]): void {
  const split = PARAPHRASES.length;
  const all = hits.length;
  console.log(
    `    ${label.padEnd(26)}${rate(hits, 0, split).padEnd(17)}${rate(hits, split, all).padEnd(17)}${rate(hits, 0, all)}`,
  );
}

/**
 * Exact cosine ranking of the same vectors (no index): whether each fact is in the first TOP, ties
 * counted against it. Vector mode's ceiling with this embedder.
 */
function exactHits(
  embed: (text: string) => Float32Array,
  contents: ReadonlyArray<{ content: string; fact?: number }>,
): boolean[] {
  const vectors = contents.map(({ content }) => embed(content));
  return [...PARAPHRASES, ...CONTROLS].map(([, question], i) => {
    const at = contents.findIndex(({ fact }) => fact === i);
    const query = embed(question);
    const own = cosine(vectors[at], query);
    let ahead = 0;
    for (let j = 0; j < vectors.length && ahead < TOP; j++)
      if (j !== at && cosine(vectors[j], query) >= own) ahead++;
    return ahead < TOP;
  });
}

/**
 * Quality: the facts of both sets mixed into DISTRACTORS generated entries (bench/memory-words.ts) of
 * one agent, stored with memory::store_many and embedded by the queue, then each question recalled in
 * every mode: recall@TOP is the share of questions whose fact is in the first TOP results.
 */
async function quality(
  label: string,
  env: Record<string, string>,
  exact?: (text: string) => Float32Array,
): Promise<void> {
  await withService(env, async (service) => {
    const call = caller(service);
    const agentId = await newAgent(service, "bench-retrieval-quality");
    const pairs = [...PARAPHRASES, ...CONTROLS];
    const contents = qualityMemory();
    const factIds = new Array<string>(pairs.length);
    for (let at = 0; at < contents.length; at += STORE_BATCH) {
      const batch = contents.slice(at, at + STORE_BATCH);
      const { entries } = await call<{ entries: Array<{ id: string }> }>("memory::store_many", {
        agentId,
        entries: batch.map(({ content }) => ({ content })),
      });
      batch.forEach(({ fact }, i) => {
        if (fact !== undefined) factIds[fact] = entries[i].id;
      });
    }
    const { status, ms } = await settled(service, agentId, 120_000);
    console.log(
      `  ${label}: ${status.entries.toLocaleString("en")} entries, ${status.embedded.toLocaleString("en")} embedded in ${(ms / 1000).toFixed(1)} s` +
        (status.pending > 0 ? ` (${status.pending} still pending: ${status.lastError ?? "no error"})` : ""),
    );

    const found: Record<Mode, boolean[]> = { text: [], vector: [], hybrid: [] };
    let textOnlyHybrid = 0;
    for (const [i, [, question]] of pairs.entries()) {
      for (const mode of MODES) {
        const { results } = await call<Recalled>("memory::recall", {
          agentId,
          query: question,
          limit: TOP,
          mode,
        });
        found[mode][i] = results.some((hit) => hit.id === factIds[i]);
        if (
          mode === "hybrid" &&
          results.length > 0 &&
          !results.some((hit) => hit.matchedBy.includes("vector"))
        )
          textOnlyHybrid++;
      }
    }
    console.log(`    ${`recall@${TOP}`.padEnd(26)}${"paraphrases".padEnd(17)}${"controls".padEnd(17)}all`);
    row("text (baseline)", found.text);
    row("vector", found.vector);
    row("hybrid", found.hybrid);
    if (exact) row("exact cosine, no index", exactHits(exact, contents));
    const share = (mode: Mode) => found[mode].filter(Boolean).length / pairs.length;
    const signed = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(2)}`;
    const kept = (mode: Mode) => {
      const had = found[mode].flatMap((hit, i) => (hit ? [i] : []));
      return `${had.filter((i) => found.hybrid[i]).length} of the ${had.length} ${mode} mode found`;
    };
    console.log(
      `    all: hybrid − text ${signed(share("hybrid") - share("text"))}, hybrid − vector ${signed(share("hybrid") - share("vector"))}; ` +
        `hybrid kept ${kept("text")} and ${kept("vector")}` +
        (textOnlyHybrid > 0
          ? `; ${textOnlyHybrid} hybrid recalls answered by text alone (query not embedded in time)`
          : ""),
    );
  });
}

/** Why the real-provider run does not happen, or null when it does. */
function realSkipReason(): string | null {
  if (process.env.AGENTOS_BENCH_REAL_EMBEDDINGS !== "1") return "AGENTOS_BENCH_REAL_EMBEDDINGS is not 1";
  const key = process.env.OPENAI_API_KEY ?? "";
  if (key === "") return "OPENAI_API_KEY is not set";
  if (/^sk-(test|bench)/.test(key) || key.length < 20)
    return "OPENAI_API_KEY is a test placeholder, not a real key";
  return null;
}

const ms = (value: number) => `${value.toFixed(2)} ms`;

/** Latencies (ms, sorted) and CPU per call of QUERIES calls after WARM_UP, each with the next question. */
async function measure(run: (query: string) => Promise<unknown>) {
  const next = queryTexts(3);
  for (let i = 0; i < WARM_UP; i++) await run(next());
  const latencies: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < QUERIES; i++) {
    const query = next();
    const start = performance.now();
    await run(query);
    latencies.push(performance.now() - start);
  }
  const used = process.cpuUsage(cpu);
  return { latencies: latencies.sort((a, b) => a - b), cpuMs: (used.user + used.system) / 1000 / QUERIES };
}

function line(label: string, m: { latencies: number[]; cpuMs: number }, target?: number): void {
  const p99 = percentile(m.latencies, 99);
  const verdict =
    target === undefined ? "" : `  target p99 < ${target} ms: ${p99 < target ? "met" : "MISSED"}`;
  console.log(
    `  ${label.padEnd(32)} p50 ${ms(percentile(m.latencies, 50))}  p99 ${ms(p99)}  max ${ms(m.latencies[m.latencies.length - 1])}` +
      `  CPU ${ms(m.cpuMs)}/query${verdict}`,
  );
}

/** Bytes of the vector tables and their indexes, by SQLite's dbstat (pages in use, whole pages). */
function vectorBytes(dbFile: string): number {
  const db = new DatabaseSync(dbFile, { readOnly: true });
  try {
    const rows = db
      .prepare(
        `SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name IN (${VECTOR_TABLES.map(() => "?").join(", ")})`,
      )
      .all(...VECTOR_TABLES) as Array<{ bytes: number }>;
    return Number(rows[0]?.bytes ?? 0);
  } finally {
    db.close();
  }
}

/** The round trip of one query's embedding to the fake over loopback HTTP, p50 (what hybrid waits on). */
async function embedRoundTrip(baseUrl: string): Promise<number> {
  const times: number[] = [];
  const next = queryTexts(4);
  for (let i = 0; i < 120; i++) {
    const start = performance.now();
    const response = await fetch(`${baseUrl}/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, input: [next()], encoding_format: "base64" }),
    });
    await response.json();
    if (i >= 20) times.push(performance.now() - start);
  }
  return percentile(
    times.sort((a, b) => a - b),
    50,
  );
}

/**
 * Speed and storage: BIG entries of one agent through memory::store_many, embedded by the queue, the
 * vectors' bytes on disk, then memory::recall in each mode over QUERIES questions (memory-words.ts).
 */
async function speed(baseUrl: string): Promise<void> {
  const env = { OPENAI_API_KEY: "sk-bench-fake", OPENAI_BASE_URL: baseUrl };
  await withService(env, async (service, dbFile) => {
    const call = caller(service);
    const agentId = await newAgent(service, "bench-retrieval-speed");
    const next = entryTexts(1);
    const started = performance.now();
    const end = Date.now();
    try {
      for (let at = 0; at < BIG; at += STORE_BATCH) {
        // Creation times spread over the year before now, as an agent's memory grows (memory-scale.ts).
        const createdMs = end - SPAN_MS + Math.floor((at / BIG) * SPAN_MS);
        setClock({ now: () => createdMs });
        await call("memory::store_many", {
          agentId,
          entries: Array.from({ length: STORE_BATCH }, () => ({ content: next() })),
        });
      }
    } finally {
      setClock(null);
    }
    const stored = performance.now() - started;
    const { status } = await settled(service, agentId, EMBED_DEADLINE_MS);
    const total = performance.now() - started;
    console.log(
      `  filled: ${BIG.toLocaleString("en")} entries via memory::store_many (${STORE_BATCH} a call) in ${(stored / 1000).toFixed(1)} s; ` +
        `${status.embedded.toLocaleString("en")} embedded by the queue (64 a request), ${status.pending} pending, ` +
        `${(total / 1000).toFixed(1)} s after the first store (${Math.round((status.embedded / total) * 1000).toLocaleString("en")} entries/s)`,
    );
    if (status.pending > 0) {
      console.log(
        `  not all embedded within ${EMBED_DEADLINE_MS / 1000} s: the entries without a vector are recalled by text only`,
      );
    }

    const bytes = vectorBytes(dbFile);
    console.log(
      `  storage: ${Math.round(bytes / status.embedded).toLocaleString("en")} bytes per vector on disk ` +
        `(${DIMENSIONS} dims; SQLite dbstat, pages of ${VECTOR_TABLES.join(", ")}: ${(bytes / 2 ** 20).toFixed(1)} MiB ` +
        `for ${status.embedded.toLocaleString("en")} vectors; the float32 values alone would be ${(DIMENSIONS * 4).toLocaleString("en")})`,
    );

    const recall = (mode: Mode) => (query: string) => call("memory::recall", { agentId, query, mode });
    const text = await measure(recall("text"));
    line("memory::recall text (baseline)", text);
    line("memory::recall vector", await measure(recall("vector")));
    const hybrid = await measure(recall("hybrid"));
    line("memory::recall hybrid", hybrid, TARGET_P99_MS);
    console.log(
      `  hybrid / text: p50 ${(percentile(hybrid.latencies, 50) / percentile(text.latencies, 50)).toFixed(2)}×, ` +
        `p99 ${(percentile(hybrid.latencies, 99) / percentile(text.latencies, 99)).toFixed(2)}×; ` +
        `in hybrid's time: the query's embedding, loopback HTTP to the in-process fake, p50 ${ms(await embedRoundTrip(baseUrl))} ` +
        "(a real provider's round trip comes on top)",
    );
    // As recall.ts asks: the over-fetched list rescored as a list of the asked limit would be.
    const sizes = passSizes(
      RECALL_LIMIT * OVER_FETCH,
      Math.max(RECALL_LIMIT * OVER_FETCH, RECALL_LIMIT * RESCORE_PER_HIT, MIN_RESCORE),
    );
    console.log(
      `  each vector list (limit ${RECALL_LIMIT} × ${OVER_FETCH} fetched for fusion): the index shortlists ${sizes.hamming.toLocaleString("en")} ` +
        `of the ${BIG.toLocaleString("en")} sign codes, then rescores ${sizes.rescore} int8 vectors read from SQLite (src/engine/vector/scan.ts)`,
    );
  });
}

const SPARSE_NOTE =
  "one-hot vectors are zero in all but a few of their 1536 dimensions; a sign code alone reads those zeros " +
  "as negative and the shortlists before rescoring lost such neighbours at random (vector 0.72 here), so the " +
  "index turns every vector before taking its sign bits (src/engine/vector/rotation.ts)";

/**
 * `npm run bench retrieval` (issue #35): recall@5 of paraphrases that share no word with their facts
 * (and of controls that do) among 2 000 other memories, in text, vector and hybrid mode; memory::recall
 * latency at 100 000 embedded entries of one agent; bytes per vector on disk. In process, SQLite.
 */
/** Recall@TOP of the paraphrases and controls with each stand-in embedder (and OpenAI's when asked). */
async function qualityPart(projectedUrl: string, oneHotUrl: string): Promise<void> {
  console.log(
    `\n## Retrieval quality: recall@${TOP} of ${PARAPHRASES.length} paraphrase questions sharing no word with their fact ` +
      `and ${CONTROLS.length} controls sharing words, among ${DISTRACTORS.toLocaleString("en")} other memories of one agent (SQLite)`,
  );
  console.log(
    `  The embedders are deterministic stand-ins served as ${MODEL} (${DIMENSIONS} dims): the hashed bag of words of ` +
      "test/helpers/hashed-embedder.ts, whose lexicon lists every pair's synonyms. Their synonyms are given, not " +
      "learned: their numbers show the plumbing and the fusion, not a model's quality.",
  );
  await quality(
    "stand-in: the bag of words as a dense random projection (this bench's fake)",
    {
      OPENAI_API_KEY: "sk-bench-fake",
      OPENAI_BASE_URL: projectedUrl,
    },
    (text) => projectedEmbedding(text, DIMENSIONS),
  );
  await quality(
    "stand-in: the tests' one-hot hashed bag of words (test/helpers/fake-openai.ts)",
    {
      OPENAI_API_KEY: "sk-bench-fake",
      OPENAI_BASE_URL: oneHotUrl,
    },
    (text) => hashedEmbedding(text, DIMENSIONS),
  );
  console.log(`    (${SPARSE_NOTE})`);
  const skip = realSkipReason();
  if (skip !== null) {
    console.log(
      `  real OpenAI ${MODEL}: skipped (${skip}; set AGENTOS_BENCH_REAL_EMBEDDINGS=1 and a real OPENAI_API_KEY to run it)`,
    );
  } else {
    const realEnv: Record<string, string> = { OPENAI_API_KEY: process.env.OPENAI_API_KEY ?? "" };
    if (process.env.OPENAI_BASE_URL) realEnv.OPENAI_BASE_URL = process.env.OPENAI_BASE_URL;
    await quality(
      `real OpenAI ${MODEL}${realEnv.OPENAI_BASE_URL ? ` at ${realEnv.OPENAI_BASE_URL}` : ""}`,
      realEnv,
    );
  }
}

export async function benchRetrieval(): Promise<void> {
  checkPairs();
  // AGENTOS_BENCH_RETRIEVAL_PARTS (e.g. "quality") runs some of the parts: quality, speed; both by default.
  const parts = (process.env.AGENTOS_BENCH_RETRIEVAL_PARTS ?? "quality,speed").split(",");
  const projected = await startProjectedFake();
  const oneHot = await startFakeOpenAI({ embeddings: "words", dimensions: DIMENSIONS });
  try {
    if (parts.includes("quality")) await qualityPart(projected.baseUrl, oneHot.baseUrl);
    if (!parts.includes("speed")) return;
    console.log(
      `\n## Retrieval speed: memory::recall over ${BIG.toLocaleString("en")} embedded entries of one agent ` +
        `(created over a year; SQLite, ${DIMENSIONS} dims, the dense stand-in; ${QUERIES} queries of memory-words.ts after ${WARM_UP}, limit ${RECALL_LIMIT})`,
    );
    await speed(projected.baseUrl);
  } finally {
    await oneHot.close();
    await projected.close();
  }
}
