import { join } from "node:path";
import { z } from "zod";
import { tempDir } from "./util.ts";

/** Our 1-step run over HTTP must be at least as fast as Mastra's 1-step run in process. */
export const PEER_TARGET = 1;

/** A peer's 1-step and n-step runs, to be measured in the same rounds as ours. */
export interface PeerRuns {
  one(): Promise<void>;
  long(): Promise<void>;
  close(): void;
}

/**
 * The peer baseline: Mastra (@mastra/core, LibSQL storage on a file, its documented durable setup,
 * which stores every run) running a 1-step and an `n`-step sequential workflow of no-op steps in this
 * process, no HTTP. Null, with the reason printed, when Mastra is not installed or does not run here.
 */
export async function mastraRuns(n: number): Promise<PeerRuns | null> {
  let mastra: typeof import("@mastra/core");
  let workflows: typeof import("@mastra/core/workflows");
  let libsql: typeof import("@mastra/libsql");
  try {
    mastra = await import("@mastra/core");
    workflows = await import("@mastra/core/workflows");
    libsql = await import("@mastra/libsql");
  } catch (error) {
    console.log(`  Mastra is not available here (${(error as Error).message}): no peer ratio.`);
    return null;
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
    const chain = (id: string, steps: number) => {
      let flow = workflows.createWorkflow({ id, inputSchema: value, outputSchema: value });
      for (let i = 0; i < steps; i++) flow = flow.then(noop(`${id}-s${i}`));
      return flow.commit();
    };
    const instance = new mastra.Mastra({
      workflows: { one: chain("one", 1), long: chain("long", n) },
      storage: new libsql.LibSQLStore({ id: "bench", url: `file:${join(dir.path, "mastra.db")}` }),
      logger: false,
    });
    const run = (id: "one" | "long") => async () => {
      const started = await instance.getWorkflow(id).createRun();
      const result = await started.start({ inputData: { n: 1 } });
      if (result.status !== "success") throw new Error(`Mastra run ${result.status}`);
    };
    await run("one")();
    return { one: run("one"), long: run("long"), close: () => dir.remove() };
  } catch (error) {
    console.log(`  Mastra did not run here (${(error as Error).message}): no peer ratio.`);
    dir.remove();
    return null;
  }
}
