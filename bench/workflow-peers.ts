import { join } from "node:path";
import { z } from "zod";
import { median, tempDir } from "./util.ts";

const LONG = 50;
const ROUNDS = 7;
const ROUND_MS = 1000;
/** Our 1-step run over HTTP must be at least as fast as Mastra's 1-step run in process. */
const TARGET = 1;

/** Median µs per call of `op` over alternating rounds (after a warm-up), one list per op. */
async function timeRounds(ops: Array<() => Promise<unknown>>): Promise<number[]> {
  const samples = ops.map(() => [] as number[]);
  for (let round = -1; round < ROUNDS; round++) {
    for (const [index, op] of ops.entries()) {
      let count = 0;
      const start = performance.now();
      while (performance.now() - start < (round < 0 ? ROUND_MS / 2 : ROUND_MS)) {
        await op();
        count++;
      }
      if (round >= 0) samples[index]?.push(((performance.now() - start) * 1000) / count);
    }
  }
  return samples.map((values) => median(values));
}

/**
 * The peer baseline: Mastra (@mastra/core, LibSQL storage on a file, as its documented durable setup
 * that snapshots runs) running a 1-step and a 50-step sequential workflow of no-op steps in this
 * process, no HTTP. Prints its fixed and per-step cost, and our 1-step run over HTTP (`ourOneStepUs`,
 * measured by the caller against the real service) against its 1-step run as a ratio (≥ 1: ours is as
 * fast). When Mastra is not installed or does not run here, says so and returns.
 */
export async function benchWorkflowPeers(ourOneStepUs: number): Promise<void> {
  console.log(`\n## Workflow peers: Mastra in process, 1 vs ${LONG} no-op steps (LibSQL file storage)`);
  let mastra: typeof import("@mastra/core");
  let workflows: typeof import("@mastra/core/workflows");
  let libsql: typeof import("@mastra/libsql");
  try {
    mastra = await import("@mastra/core");
    workflows = await import("@mastra/core/workflows");
    libsql = await import("@mastra/libsql");
  } catch (error) {
    console.log(`  Mastra is not available here (${(error as Error).message}): no peer ratio.`);
    return;
  }
  const dir = tempDir();
  try {
    const value = z.object({ n: z.number() });
    const noop = (id: string) =>
      workflows.createStep({
        id,
        inputSchema: value,
        outputSchema: value,
        execute: async ({ inputData }) => inputData,
      });
    const chain = (id: string, n: number) => {
      let flow = workflows.createWorkflow({ id, inputSchema: value, outputSchema: value });
      for (let i = 0; i < n; i++) flow = flow.then(noop(`${id}-s${i}`));
      return flow.commit();
    };
    const one = chain("one", 1);
    const long = chain("long", LONG);
    const instance = new mastra.Mastra({
      workflows: { one, long },
      storage: new libsql.LibSQLStore({ id: "bench", url: `file:${join(dir.path, "mastra.db")}` }),
      logger: false,
    });
    const run = (id: "one" | "long") => async () => {
      const workflow = instance.getWorkflow(id);
      const started = await workflow.createRun();
      const result = await started.start({ inputData: { n: 1 } });
      if (result.status !== "success") throw new Error(`Mastra run ${result.status}`);
    };
    const [oneUs, longUs] = (await timeRounds([run("one"), run("long")])) as [number, number];
    const step = (longUs - oneUs) / (LONG - 1);
    console.log(`  Mastra run of 1 step                         ${oneUs.toFixed(0).padStart(6)} µs`);
    console.log(`  Mastra run of ${LONG} steps                       ${longUs.toFixed(0).padStart(6)} µs`);
    console.log(`  Mastra fixed cost ${(oneUs - step).toFixed(0)} µs, per step ${step.toFixed(1)} µs`);
    const ratio = oneUs / ourOneStepUs;
    console.log(
      `  our 1-step run over HTTP ${ourOneStepUs.toFixed(0)} µs vs Mastra's in process ${oneUs.toFixed(0)} µs: ratio ${ratio.toFixed(2)} (target ≥ ${TARGET}: ${ratio >= TARGET ? "met" : "MISSED"})`,
    );
  } catch (error) {
    console.log(`  Mastra did not run here (${(error as Error).message}): no peer ratio.`);
  } finally {
    dir.remove();
  }
}
