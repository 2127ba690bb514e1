import type { Engine } from "../src/engine/engine.ts";
import { median, percentile, runConcurrent, withService } from "./util.ts";

const SMALL = 1_000;
const BIG = 100_000;
const LANES = 8;
const SAMPLES = 2_000;

/**
 * `npm run bench kg` (issue #15): an add with 3 relations (p50, p99) on a graph of 1 000 and of
 * 100 000 entities (target: p50 < 1 ms, the two within 2×); traverse to depth 3 from one entity whose
 * neighbourhood is the same in both graphs (target: ratio near 1); a time-range query from that entity
 * and kg::stats at both sizes (issue #34: each within 2× of its time at 1 000 entities).
 */
export async function benchKg(): Promise<void> {
  await withService(async ({ engine }) => {
    const realm = (await engine.trigger({
      function_id: "realm::create",
      payload: { name: "kg", owner: "bench" },
    })) as {
      id: string;
    };
    const agent = async (name: string) =>
      (
        (await engine.trigger({ function_id: "agent::create", payload: { name, realmId: realm.id } })) as {
          id: string;
        }
      ).id;
    const small = await agent("small");
    const big = await agent("big");
    for (const [agentId, size] of [
      [small, SMALL],
      [big, BIG],
    ] as const) {
      const started = performance.now();
      await seed(engine, agentId, size);
      await neighbourhood(engine, agentId);
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `  seeded ${size.toLocaleString("en")} entities in ${seconds.toFixed(1)} s (${Math.round(size / seconds).toLocaleString("en")} adds/s, ${LANES} in flight)`,
      );
    }
    const ingest = async (agentId: string, size: number) => {
      let i = 0;
      const add = () =>
        engine.trigger({
          function_id: "kg::add_temporal",
          payload: {
            agentId,
            entity: `e${(i * 7919) % size}`,
            type: "thing",
            properties: { n: i++ },
            relations: [0, 1, 2].map((k) => ({ target: `e${(i * 31 + k * 101) % size}`, type: "rel" })),
          },
        });
      const latencies: number[] = [];
      for (let w = 0; w < 200; w++) await add();
      for (let s = 0; s < SAMPLES; s++) {
        const t = performance.now();
        await add();
        latencies.push(performance.now() - t);
      }
      const sorted = latencies.sort((a, b) => a - b);
      return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    };
    const at1k = await ingest(small, SMALL);
    const at100k = await ingest(big, BIG);
    const ratio = at100k.p50 / at1k.p50;
    const met = at100k.p50 < 1 && ratio <= 2;
    console.log("\n## KG: kg::add_temporal with 3 relations (sequential, one client)");
    console.log(
      `  at ${SMALL.toLocaleString("en")} entities    p50 ${at1k.p50.toFixed(2)} ms, p99 ${at1k.p99.toFixed(2)} ms`,
    );
    console.log(
      `  at ${BIG.toLocaleString("en")} entities  p50 ${at100k.p50.toFixed(2)} ms, p99 ${at100k.p99.toFixed(2)} ms`,
    );
    console.log(`  ratio ${ratio.toFixed(2)} (target p50 < 1 ms and ≤ 2×: ${met ? "met" : "MISSED"})`);

    const traverse = (agentId: string) => () =>
      engine.trigger({
        function_id: "kg::traverse",
        payload: { agentId, startEntity: "hub", direction: "both", maxDepth: 3, maxNodes: 500 },
      });
    const times = { small: [] as number[], big: [] as number[] };
    for (let round = 0; round < 5; round++) {
      times.small.push((await runConcurrent(traverse(small), 1, 400)).opsPerSec);
      times.big.push((await runConcurrent(traverse(big), 1, 400)).opsPerSec);
    }
    const nodes = ((await traverse(big)()) as { nodeCount: number }).nodeCount;
    const traverseRatio = median(times.big) / median(times.small);
    console.log(`\n## KG: traverse depth 3 from one entity (${nodes} entities reached), same neighbourhood`);
    console.log(
      `  in ${SMALL.toLocaleString("en")} entities     ${Math.round(median(times.small)).toLocaleString("en")} traversals/s`,
    );
    console.log(
      `  in ${BIG.toLocaleString("en")} entities   ${Math.round(median(times.big)).toLocaleString("en")} traversals/s`,
    );
    console.log(
      `  ratio ${traverseRatio.toFixed(2)} (target near 1: ${traverseRatio >= 0.7 ? "met" : "MISSED"})`,
    );

    const timeRange = { from: 0, to: Date.now() + 60_000 };
    const rangeQuery = (agentId: string) => () =>
      engine.trigger({
        function_id: "kg::query_temporal",
        payload: { agentId, entity: "hub", depth: 2, timeRange },
      });
    const rangeTimes = { small: [] as number[], big: [] as number[] };
    for (let round = 0; round < 5; round++) {
      rangeTimes.small.push(msPerCall(await runConcurrent(rangeQuery(small), 1, 400)));
      rangeTimes.big.push(msPerCall(await runConcurrent(rangeQuery(big), 1, 400)));
    }
    const returned = ((await rangeQuery(big)()) as unknown[]).length;
    sideBySide(
      `kg::query_temporal from one entity, depth 2, over a time range (${returned} versions returned), same neighbourhood`,
      median(rangeTimes.small),
      median(rangeTimes.big),
    );

    const statsOf = (agentId: string) => () =>
      engine.trigger({ function_id: "kg::stats", payload: { agentId } });
    const statsTimes = { small: [] as number[], big: [] as number[] };
    for (let round = 0; round < 5; round++) {
      statsTimes.small.push(await timed(statsOf(small)));
      statsTimes.big.push(await timed(statsOf(big)));
    }
    sideBySide("kg::stats (median of 5 calls each)", median(statsTimes.small), median(statsTimes.big));
    console.log(`  at ${BIG.toLocaleString("en")}: ${JSON.stringify(await statsOf(big)())}`);
  });
}

const msPerCall = (round: { opsPerSec: number }) => 1000 / round.opsPerSec;

async function timed(op: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await op();
  return performance.now() - started;
}

/** One operation's median time at both sizes, their ratio and the target (≤ 2×). */
function sideBySide(title: string, small: number, big: number): void {
  const ratio = big / small;
  console.log(`\n## KG: ${title}`);
  console.log(`  at ${SMALL.toLocaleString("en")} entities    ${small.toFixed(2)} ms`);
  console.log(`  at ${BIG.toLocaleString("en")} entities  ${big.toFixed(2)} ms`);
  console.log(`  ratio ${ratio.toFixed(2)} (target ≤ 2×: ${ratio <= 2 ? "met" : "MISSED"})`);
}

/** `count` entities, each related to up to 2 earlier ones, `LANES` adds in flight. */
async function seed(engine: Engine, agentId: string, count: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const relations =
        i === 0
          ? []
          : [
              { target: `e${(i * 13) % i}`, type: "rel" },
              { target: `e${(i * 17) % i}`, type: "rel" },
            ];
      await engine.trigger({
        function_id: "kg::add_temporal",
        payload: { agentId, entity: `e${i}`, type: "thing", relations },
      });
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
}

/** A hub with 5 spokes, each with 5 leaves: the same 31 entities in both graphs, apart from the rest. */
async function neighbourhood(engine: Engine, agentId: string): Promise<void> {
  const add = (entity: string, targets: string[]) =>
    engine.trigger({
      function_id: "kg::add_temporal",
      payload: {
        agentId,
        entity,
        type: "thing",
        relations: targets.map((target) => ({ target, type: "has" })),
      },
    });
  const spokes = [0, 1, 2, 3, 4].map((s) => `spoke${s}`);
  await add("hub", spokes);
  for (const spoke of spokes)
    await add(
      spoke,
      [0, 1, 2, 3, 4].map((l) => `${spoke}-leaf${l}`),
    );
}
