import { createEngine } from "../src/engine/index.ts";
import { LocalBus } from "../src/engine/trigger-types/subscribe.ts";
import { measure, report } from "./util.ts";

/** engine.trigger of a no-op function vs calling the same function directly. */
export async function benchEngine(): Promise<void> {
  const engine = createEngine({ bus: new LocalBus() });
  const noop = async (input: unknown) => input;
  engine.worker("bench").registerFunction({ id: "bench::noop" }, noop);
  const payload = { n: 1 };
  const direct = await measure("direct call of the handler", () => noop(payload));
  const viaEngine = await measure("engine.trigger(bench::noop)", () =>
    engine.trigger({ function_id: "bench::noop", payload }),
  );
  report("Engine: trigger vs direct call", viaEngine, direct);
  engine.shutdown();
}
