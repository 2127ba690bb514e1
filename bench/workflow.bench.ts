import { compare, report, withService } from "./util.ts";

const STEPS = 200;
const WIDTH = 50;

/**
 * A 200-step sequential workflow of no-op functions (every step checkpointed to SQLite) vs 200 direct
 * engine.trigger calls of the same function; and a 50-wide fanout batch.
 */
export async function benchWorkflow(): Promise<void> {
  await withService(async ({ engine }) => {
    engine.worker("bench").registerFunction({ id: "bench::noop" }, async () => "ok");
    const steps = Array.from({ length: STEPS }, (_, i) => ({ name: `s${i}`, functionId: "bench::noop" }));
    await engine.trigger({ function_id: "workflow::create", payload: { id: "seq", name: "seq", steps } });
    const fanout = Array.from({ length: WIDTH }, (_, i) => ({
      name: `f${i}`,
      functionId: "bench::noop",
      mode: "fanout",
    }));
    await engine.trigger({
      function_id: "workflow::create",
      payload: { id: "fan", name: "fan", steps: fanout },
    });
    const direct = async () => {
      let input: unknown = null;
      for (let i = 0; i < STEPS; i++)
        input = await engine.trigger({ function_id: "bench::noop", payload: { input } });
    };
    const { baseline, subject } = await compare(
      { name: `${STEPS} direct engine.trigger calls`, op: direct },
      {
        name: `${STEPS}-step sequential workflow run`,
        op: () => engine.trigger({ function_id: "workflow::run", payload: { workflowId: "seq" } }),
      },
      5,
      1500,
    );
    report(
      `Workflow: ${STEPS} sequential steps vs ${STEPS} direct calls (checkpointing included)`,
      subject,
      baseline,
    );
    console.log(
      `  per step: ${((1e6 / subject.opsPerSec - 1e6 / baseline.opsPerSec) / STEPS).toFixed(1)} µs added (${(1e6 / subject.opsPerSec / STEPS).toFixed(1)} µs in all)`,
    );
    const fan = await compare(
      {
        name: `${WIDTH} parallel direct calls`,
        op: () =>
          Promise.all(Array.from({ length: WIDTH }, () => engine.trigger({ function_id: "bench::noop" }))),
      },
      {
        name: `${WIDTH}-wide fanout workflow run`,
        op: () => engine.trigger({ function_id: "workflow::run", payload: { workflowId: "fan" } }),
      },
      5,
      1500,
    );
    report(
      `Workflow: one ${WIDTH}-wide fanout batch vs ${WIDTH} parallel direct calls`,
      fan.subject,
      fan.baseline,
    );
  });
}
