import { createEngine } from "../src/engine/index.ts";
import { LocalBus } from "../src/engine/trigger-types/subscribe.ts";
import { compare, report } from "./util.ts";

/** engine.trigger of a no-op function vs calling the same function directly. */
export async function benchEngine(): Promise<void> {
  const engine = createEngine({ bus: new LocalBus() });
  const noop = async (input: unknown) => input;
  engine.worker("bench").registerFunction({ id: "bench::noop" }, noop);
  const payload = { n: 1 };
  const { baseline, subject } = await compare(
    { name: "direct call of the handler", op: () => noop(payload) },
    {
      name: "engine.trigger(bench::noop)",
      op: () => engine.trigger({ function_id: "bench::noop", payload }),
    },
  );
  report("Engine: trigger vs direct call", subject, baseline);
  engine.shutdown();
}
