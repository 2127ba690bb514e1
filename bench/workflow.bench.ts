import { createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import { compare, report, tempDir } from "./util.ts";

const STEPS = 200;
const WIDTH = 50;

/**
 * A 200-step sequential workflow of no-op functions (every step checkpointed to SQLite) vs 200 direct
 * engine.trigger calls of the same function; and a 50-wide fanout batch.
 */
export async function benchWorkflow(): Promise<void> {
  const dir = tempDir();
  const service = await createAgentOS({
    ...loadConfig({ AGENTOS_DATA_DIR: dir.path, AGENTOS_API_KEY: "bench-admin-key-0123456789" }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
  });
  const { engine } = service;
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
  try {
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
  } finally {
    await service.close();
    dir.remove();
  }
}
