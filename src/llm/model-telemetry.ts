import type { LanguageModelMiddleware, wrapLanguageModel } from "ai";
import { report } from "../engine/telemetry.ts";
import type { TriggerFn } from "../engine/types.ts";
import { endSpan, inSpan, startSpan } from "../shared/tracing.ts";
import type { ModelChoice } from "./types.ts";

export type WrappableModel = Parameters<typeof wrapLanguageModel>[0]["model"];

const reporter = (choice: ModelChoice, trigger: TriggerFn) => (started: number, outcome: "ok" | "error") =>
  report(trigger, {
    type: "model_call",
    provider: choice.provider.id,
    model: choice.model.id,
    durationMs: performance.now() - started,
    outcome,
  });

const attributesOf = (choice: ModelChoice) => ({
  "gen_ai.system": choice.provider.id,
  "gen_ai.request.model": choice.model.id,
});

/** One model call, made by whatever means, as telemetry (duration, outcome) and a trace span `llm.call`. */
export function timedCall<T>(
  choice: ModelChoice,
  trigger: TriggerFn,
  call: () => PromiseLike<T>,
): Promise<T> {
  const tell = reporter(choice, trigger);
  return inSpan("llm.call", attributesOf(choice), async () => {
    const started = performance.now();
    try {
      const result = await call();
      tell(started, "ok");
      return result;
    } catch (error) {
      tell(started, "error");
      throw error;
    }
  });
}

/** Each model call as telemetry (duration, outcome) and a trace span `llm.call` (a stream: until its last part). */
export function timed(choice: ModelChoice, trigger: TriggerFn): LanguageModelMiddleware {
  const tell = reporter(choice, trigger);
  const attributes = attributesOf(choice);
  return {
    wrapGenerate: ({ doGenerate }) => timedCall(choice, trigger, doGenerate),
    wrapStream: async ({ doStream }) => {
      const started = performance.now();
      const span = startSpan("llm.call", { ...attributes, "gen_ai.stream": true });
      let result: Awaited<ReturnType<typeof doStream>>;
      try {
        result = await doStream();
      } catch (error) {
        tell(started, "error");
        endSpan(span, error);
        throw error;
      }
      let failed = false;
      const watched = result.stream.pipeThrough(
        new TransformStream({
          transform(part, controller) {
            if ((part as { type?: string }).type === "error") failed = true;
            controller.enqueue(part);
          },
          flush() {
            tell(started, failed ? "error" : "ok");
            endSpan(span, failed ? new Error("the model's stream failed") : undefined);
          },
        }),
      );
      return { ...result, stream: watched };
    },
  };
}
