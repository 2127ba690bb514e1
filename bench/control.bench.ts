import type { Engine } from "../src/engine/engine.ts";
import { type Measurement, median, newRealm, report, runConcurrent, withService } from "./util.ts";

const CLIENTS = 32;
const ROUNDS = 3;
const ROUND_MS = 1500;
const SMALL = 1_000;
const BIG = 100_000;

/**
 * `npm run bench control` (issue #13):
 * 1) council::activity appends per second (one realm's hash chain; appends serialise on its head) at 1
 *    and 32 concurrent clients, against raw state::set by as many clients;
 * 2) council::verify of a chain of 1 000 and of 100 000 entries (linear: each entry is read and hashed);
 * 3) mission::checkout by 32 concurrent clients (each a compare-and-swap on its own mission) against raw
 *    state::set.
 */
export async function benchControl(): Promise<void> {
  await withService(async ({ engine }) => {
    await benchAppends(engine);
    await benchVerify(engine);
    await benchCheckout(engine);
  });
}

const entryOf = (realmId: string, i: number) => ({
  realmId,
  actorKind: "agent",
  actorId: `agent-${i % 7}`,
  action: "task_done",
  entityType: "mission",
  entityId: `msn-${i}`,
  details: { n: i },
});

function rawWriter(engine: Engine, scope: string) {
  let k = 0;
  return () =>
    engine.trigger({ function_id: "state::set", payload: { scope, key: `k-${k++}`, value: { n: k } } });
}

/** Medians of alternating rounds of the baseline and the subject. */
async function rounds(base: () => Promise<unknown>, subject: () => Promise<unknown>, clients: number) {
  await runConcurrent(base, clients, 300);
  await runConcurrent(subject, clients, 300);
  const b: number[] = [];
  const s: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    b.push((await runConcurrent(base, clients, ROUND_MS)).opsPerSec);
    s.push((await runConcurrent(subject, clients, ROUND_MS)).opsPerSec);
  }
  return { base: median(b), subject: median(s) };
}

async function benchAppends(engine: Engine): Promise<void> {
  const realmId = await newRealm(engine, "appends");
  let i = 0;
  const append = () => engine.trigger({ function_id: "council::activity", payload: entryOf(realmId, i++) });
  for (const clients of [1, CLIENTS]) {
    const measured = await rounds(rawWriter(engine, `bench_raw_${clients}`), append, clients);
    const baseline: Measurement = {
      name: `state::set, ${clients} client${clients > 1 ? "s" : ""}`,
      opsPerSec: measured.base,
    };
    const subject: Measurement = {
      name: `council::activity, ${clients} client${clients > 1 ? "s" : ""}`,
      opsPerSec: measured.subject,
    };
    report(
      `Council: hash-chained activity appends, ${clients} client${clients > 1 ? "s" : ""}, one realm`,
      subject,
      baseline,
    );
  }
  const verdict = (await engine.trigger({ function_id: "council::verify", payload: { realmId } })) as {
    valid: boolean;
    length: number;
  };
  console.log(`  ${verdict.length.toLocaleString("en")} entries appended, chain valid: ${verdict.valid}`);
}

async function seedChain(engine: Engine, realmId: string, count: number): Promise<void> {
  // Four appenders: enough to keep the store busy, few enough that retries on the head stay rare.
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      await engine.trigger({ function_id: "council::activity", payload: entryOf(realmId, i) });
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
}

async function benchVerify(engine: Engine): Promise<void> {
  console.log("\n## Council: verify of a realm's activity chain (linear in its length)");
  for (const size of [SMALL, BIG]) {
    const realmId = await newRealm(engine, `chain-${size}`);
    const seeded = performance.now();
    await seedChain(engine, realmId, size);
    const seedSeconds = (performance.now() - seeded) / 1000;
    const times: number[] = [];
    let verdict = { valid: false, length: 0 };
    for (let round = 0; round < 3; round++) {
      const started = performance.now();
      verdict = (await engine.trigger({
        function_id: "council::verify",
        payload: { realmId },
      })) as typeof verdict;
      times.push(performance.now() - started);
    }
    const ms = median(times);
    console.log(
      `  ${size.toLocaleString("en").padStart(7)} entries: verify ${ms.toFixed(0)} ms (${((ms * 1000) / size).toFixed(1)} µs/entry), valid ${verdict.valid}, length ${verdict.length.toLocaleString("en")}; seeded at ${Math.round(size / seedSeconds).toLocaleString("en")} appends/s`,
    );
  }
}

async function benchCheckout(engine: Engine): Promise<void> {
  const realmId = await newRealm(engine, "missions");
  const ids: string[] = [];
  // More missions than the rounds can take: every checkout measured is a winning one.
  const POOL = 60_000;
  for (let start = 0; start < POOL; start += 256) {
    const made = await Promise.all(
      Array.from({ length: Math.min(256, POOL - start) }, (_, j) =>
        engine.trigger({
          function_id: "mission::create",
          payload: { realmId, title: `m${start + j}`, createdBy: "bench" },
        }),
      ),
    );
    ids.push(...made.map((mission) => (mission as { id: string }).id));
  }
  let taken = 0;
  let refused = 0;
  const checkout = async () => {
    const id = ids[taken++ % ids.length];
    await engine
      .trigger({ function_id: "mission::checkout", payload: { realmId, id, agentId: `agent-${taken}` } })
      .catch(() => refused++);
  };
  const measured = await rounds(rawWriter(engine, "bench_raw_missions"), checkout, CLIENTS);
  report(
    `Missions: checkout (compare-and-swap per mission), ${CLIENTS} concurrent clients, vs raw state::set`,
    { name: `mission::checkout, ${CLIENTS} clients`, opsPerSec: measured.subject },
    { name: `state::set, ${CLIENTS} clients`, opsPerSec: measured.base },
  );
  console.log(
    `  ${taken.toLocaleString("en")} checkouts tried on ${POOL.toLocaleString("en")} missions; ${refused.toLocaleString("en")} refused (already taken: each mission is won once)`,
  );
}
