import { join } from "node:path";
import { createEngine } from "../src/engine/index.ts";
import { registerSearchFunctions } from "../src/engine/search/functions.ts";
import { SqliteTextIndex } from "../src/engine/search/sqlite.ts";
import { registerStateFunctions } from "../src/engine/state/functions.ts";
import { SqliteStateStore } from "../src/engine/state/sqlite.ts";
import { LocalBus } from "../src/engine/trigger-types/subscribe.ts";
import { setClock } from "../src/shared/clock.ts";
import { MEMORY_INDEX, registerMemory } from "../src/workers/memory/index.ts";
import { benchMemoryScale } from "./memory-scale.ts";
import { percentile, tempDir } from "./util.ts";

const BIG = 100_000;
const SMALL = 1_000;
const QUERIES = 500;
const WARM_UP = 50;
const TARGET_P99_MS = 20;
/** The entries' creation times spread over the year before now. */
const SPAN_MS = 365 * 24 * 60 * 60 * 1000;

/** A seeded generator, so every run searches the same corpus with the same queries. */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
  return <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
}

const words = (text: string) => text.trim().split(/\s+/);
const PEOPLE = words(
  "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Oscar Peggy Trent Victor Walter",
);
const WHO = [
  ...PEOPLE,
  "the user",
  "the customer",
  "the team",
  "our manager",
  "the vendor",
  "the on-call engineer",
];
const VERBS = words(`asked about deployed fixed reported reviewed wants prefers mentioned scheduled cancelled
  discussed approved rejected tested migrated booked renewed archived shared updated documented estimated paid
  ordered configured upgraded benchmarked monitored signed postponed escalated`);
const ADJECTIVES = words(`new old broken fast slow critical minor quarterly weekly shared private staging
  production urgent overdue encrypted legacy internal external annual monthly draft final remote primary`);
const NOUNS = words(`database invoice meeting report server dashboard release budget contract ticket pipeline
  cluster account password calendar newsletter roadmap backup kubernetes postgres migration holiday flight hotel
  presentation spreadsheet bug feature design api laptop license subscription domain certificate firewall router
  printer office lease payroll insurance visa passport conference workshop hackathon interview candidate offer
  salary bonus refund shipment warehouse supplier order catalog pricing discount campaign webinar podcast article
  survey feedback complaint outage incident postmortem alert runbook terraform docker image registry repository
  branch merge coverage benchmark latency cache queue schema index transaction replica snapshot vacation dentist
  birthday anniversary gift restaurant recipe allergy medication marathon bicycle mortgage receipt expense`);
const WHEN = [
  "on Monday",
  "on Friday",
  "next week",
  "yesterday",
  "before the deadline",
  "in Berlin",
  "in Tokyo",
  "after lunch",
  "with the vendor",
  "because of the outage",
  "at the conference",
  "for the new hire",
  "without approval",
  "last month",
  "over the weekend",
  "during the standup",
];

/** Two clauses of who did what to which thing when: ~20 words from a vocabulary of ~300. */
function sentences(seed: number) {
  const pick = random(seed);
  return () =>
    `${pick(WHO)} ${pick(VERBS)} the ${pick(ADJECTIVES)} ${pick(NOUNS)} ${pick(WHEN)}, and ${pick(WHO)} ` +
    `${pick(VERBS)} the ${pick(NOUNS)} ${pick(WHEN)}.`;
}

/** What an agent asks its memory: keywords, questions (stop words and all), and phrases. */
function questions(seed: number) {
  const pick = random(seed);
  const shapes = [
    () => `${pick(NOUNS)} ${pick(NOUNS)}`,
    () => `what did ${pick(PEOPLE)} say about the ${pick(NOUNS)}?`,
    () => `${pick(ADJECTIVES)} ${pick(NOUNS)} ${pick(WHEN)}`,
    () => `when was the ${pick(NOUNS)} ${pick(VERBS)}`,
    () => pick(NOUNS),
  ];
  return () => pick(shapes)();
}

const ms = (value: number) => `${value.toFixed(2)} ms`;

/** Latencies (ms, sorted) of QUERIES calls after WARM_UP, each with the next generated question. */
async function measure(run: (query: string) => unknown): Promise<number[]> {
  const next = questions(3);
  for (let i = 0; i < WARM_UP; i++) await run(next());
  const latencies: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const query = next();
    const start = performance.now();
    await run(query);
    latencies.push(performance.now() - start);
  }
  return latencies.sort((a, b) => a - b);
}

function line(entries: number, label: string, latencies: number[], target?: number): void {
  const p99 = percentile(latencies, 99);
  const verdict =
    target === undefined ? "" : `  target p99 < ${target} ms: ${p99 < target ? "met" : "MISSED"}`;
  console.log(
    `  ${entries.toLocaleString("en").padStart(7)} entries, ${label.padEnd(36)} p50 ${ms(percentile(latencies, 50))}` +
      `  p99 ${ms(p99)}  max ${ms(latencies[latencies.length - 1])}${verdict}`,
  );
}

/**
 * memory::store of 100 000 entries for one agent (creation times spread over a year), then the
 * latency of search::query and memory::recall (limit 10) over 500 queries, against an agent with
 * 1 000 entries on the same index for comparison. SQLite, as the embedded service runs it. The
 * baseline ranks every match in one statement (no newest-first scan) on the same file.
 */
export async function benchMemory(): Promise<void> {
  const dir = tempDir();
  const file = join(dir.path, "agentos.db");
  const store = new SqliteStateStore(file);
  const index = new SqliteTextIndex(file);
  const rankAll = new SqliteTextIndex(file, { exhaustive: true });
  const engine = createEngine({ bus: new LocalBus() });
  registerStateFunctions(engine, store);
  registerSearchFunctions(engine, index);
  registerMemory(engine.worker("memory", "Agent memory"));
  const call = (function_id: string, payload: unknown) => engine.trigger({ function_id, payload });
  try {
    console.log(`\n## Memory: recall over ${BIG.toLocaleString("en")} entries of one agent (SQLite FTS5)`);
    const now = Date.now();
    const fill = async (agentId: string, count: number, seed: number) => {
      const next = sentences(seed);
      const start = performance.now();
      for (let i = 0; i < count; i++) {
        const at = now - SPAN_MS + Math.floor((i / count) * SPAN_MS);
        setClock({ now: () => at });
        await call("memory::store", { agentId, content: next(), sessionId: `session-${i >> 6}` });
      }
      setClock(null);
      return performance.now() - start;
    };
    const took = await fill("agent-big", BIG, 1);
    console.log(
      `  stored ${BIG.toLocaleString("en")} entries via memory::store in ${(took / 1000).toFixed(1)} s ` +
        `(${Math.round((BIG / took) * 1000).toLocaleString("en")} entries/s)`,
    );
    await fill("agent-small", SMALL, 2);

    for (const [agentId, entries] of [
      ["agent-big", BIG],
      ["agent-small", SMALL],
    ] as const) {
      const target = entries === BIG ? TARGET_P99_MS : undefined;
      const query = (text: string) =>
        call("search::query", { index: MEMORY_INDEX, scope: agentId, query: text });
      line(entries, "search::query", await measure(query), target);
      line(
        entries,
        "memory::recall",
        await measure((text) => call("memory::recall", { agentId, query: text })),
        target,
      );
      const baseline = (text: string) => rankAll.search(MEMORY_INDEX, agentId, text, { limit: 10 });
      line(entries, "baseline: rank every match, direct", await measure(baseline));
    }
  } finally {
    setClock(null);
    engine.shutdown();
    await rankAll.close();
    await index.close();
    await store.close();
    dir.remove();
  }
  await benchMemoryScale();
}
