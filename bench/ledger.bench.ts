import type { Engine } from "../src/engine/engine.ts";
import { compare, type Measurement, median, newRealm, report, runConcurrent, withService } from "./util.ts";

const CLIENTS = 32;
const ROUNDS = 3;
const ROUND_MS = 1500;
const SMALL = 1_000;
const BIG = 100_000;
const SEED_BATCH = 256;

/**
 * 1) ledger::spend (budget compare-and-swap, event, running totals) by 32 concurrent in-process
 *    clients against one budget vs 32 clients writing records with a raw state::set.
 * 2) ledger::summary of a realm with 100 000 spends vs one with 1 000: running totals, so ≈ 1.
 */
export async function benchLedger(): Promise<void> {
  await withService(async ({ engine }) => {
    await benchSpend(engine);
    await benchSummary(engine);
  });
}

const spendOf = (realmId: string, agentId: string, i: number) => ({
  realmId,
  agentId,
  costCents: 0.25 + (i % 10) / 100,
  provider: ["openai", "anthropic"][i % 2],
  model: ["gpt-4o", "gpt-4o-mini", "claude-sonnet-4-6", "claude-haiku-4-5"][i % 4],
  inputTokens: 1000 + (i % 500),
  outputTokens: 200 + (i % 100),
});

async function benchSpend(engine: Engine): Promise<void> {
  const realmId = await newRealm(engine, "spend");
  const { id: agentId } = (await engine.trigger({
    function_id: "agent::create",
    payload: { name: "spender", realmId },
  })) as { id: string };
  await engine.trigger({
    function_id: "ledger::set_budget",
    payload: { realmId, agentId, monthlyCents: Number.MAX_SAFE_INTEGER, hardLimit: true },
  });
  let n = 0;
  const spend = () =>
    engine.trigger({ function_id: "ledger::spend", payload: spendOf(realmId, agentId, n++) });
  let k = 0;
  const write = () =>
    engine.trigger({
      function_id: "state::set",
      payload: { scope: "bench_raw", key: `spn-${k++}`, value: { ...spendOf(realmId, agentId, k), id: k } },
    });
  await runConcurrent(write, CLIENTS, 300);
  await runConcurrent(spend, CLIENTS, 300);
  const base: number[] = [];
  const sub: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    base.push((await runConcurrent(write, CLIENTS, ROUND_MS)).opsPerSec);
    sub.push((await runConcurrent(spend, CLIENTS, ROUND_MS)).opsPerSec);
  }
  const baseline: Measurement = {
    name: `state::set, ${CLIENTS} concurrent clients`,
    opsPerSec: median(base),
  };
  const subject: Measurement = {
    name: `ledger::spend, ${CLIENTS} clients, one budget`,
    opsPerSec: median(sub),
  };
  report("Ledger: spend (CAS on one budget + event + totals) vs raw state::set", subject, baseline);
  const check = (await engine.trigger({
    function_id: "ledger::check",
    payload: { realmId, agentId },
  })) as { spentCents: number };
  // The exact sum, in integer micro-cents: every spend must have been counted, none twice.
  let micros = 0;
  for (let i = 0; i < n; i++) micros += 250_000 + (i % 10) * 10_000;
  const exact = check.spentCents === micros / 1e6 ? "exact" : `MISMATCH: expected ${micros / 1e6}`;
  console.log(`  ${n.toLocaleString("en")} spends; budget spentCents ${check.spentCents} (${exact})`);
}

/** `count` spends into a realm, `SEED_BATCH` in flight at a time. */
async function seed(engine: Engine, realmId: string, count: number): Promise<void> {
  for (let start = 0; start < count; start += SEED_BATCH) {
    const size = Math.min(SEED_BATCH, count - start);
    await Promise.all(
      Array.from({ length: size }, (_, j) => {
        const i = start + j;
        return engine.trigger({
          function_id: "ledger::spend",
          payload: spendOf(realmId, `agent-${i % 20}`, i),
        });
      }),
    );
  }
}

async function benchSummary(engine: Engine): Promise<void> {
  const small = await newRealm(engine, "small");
  const big = await newRealm(engine, "big");
  const started = performance.now();
  await seed(engine, small, SMALL);
  await seed(engine, big, BIG);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `\n  seeded ${(SMALL + BIG).toLocaleString("en")} spends in ${seconds.toFixed(1)} s (${Math.round((SMALL + BIG) / seconds).toLocaleString("en")} spends/s, ${SEED_BATCH} in flight)`,
  );
  const summary = (realmId: string) => () =>
    engine.trigger({ function_id: "ledger::summary", payload: { realmId, groupBy: "model" } });
  const { baseline, subject } = await compare(
    { name: `ledger::summary, ${SMALL.toLocaleString("en")} spends`, op: summary(small) },
    { name: `ledger::summary, ${BIG.toLocaleString("en")} spends`, op: summary(big) },
    5,
    400,
  );
  report(
    `Ledger: summary at ${BIG.toLocaleString("en")} vs ${SMALL.toLocaleString("en")} spend events`,
    subject,
    baseline,
  );
  const { eventCount } = (await summary(big)()) as { eventCount: number };
  console.log(
    `  ${(1e6 / subject.opsPerSec).toFixed(1)} µs per summary; ${eventCount.toLocaleString("en")} events counted`,
  );
}
