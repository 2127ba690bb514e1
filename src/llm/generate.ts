import { AppError, isAppError } from "../shared/errors.ts";
import { aiSdkDriver } from "./drivers/ai-sdk.ts";
import { openAiWireDriver } from "./drivers/openai-wire.ts";
import type { GenerateRequest, GenerateResult, ModelChoice, TurnDriver, TurnEvent } from "./types.ts";

export { generateStream } from "./drivers/ai-sdk.ts";

/**
 * The drivers, in the order they are offered a turn: our own OpenAI-wire loop where it is known to send
 * what the AI SDK would (it costs a fraction of the SDK's CPU), the AI SDK for everything else.
 */
const DRIVERS: readonly TurnDriver[] = [openAiWireDriver, aiSdkDriver];

export function driverFor(choice: ModelChoice, request: GenerateRequest): TurnDriver {
  return DRIVERS.find((driver) => driver.takes(choice, request)) ?? aiSdkDriver;
}

/** One chat turn (with tool round trips), trying the fallback models in order when a model fails. */
export async function generate(request: GenerateRequest): Promise<GenerateResult> {
  let lastError: unknown;
  const told = { any: false };
  const watched = request.onEvent ? { ...request, onEvent: noting(request.onEvent, told) } : request;
  for (const choice of request.choices) {
    try {
      return await driverFor(choice, watched).run(choice, watched);
    } catch (error) {
      lastError = error;
      // A refusal of ours (over budget, invalid input) is not the model's fault: no fallback helps; nor
      // can another model take over an answer the caller has partly seen.
      if (request.abortSignal?.aborted || (isAppError(error) && error.status < 500) || told.any) break;
    }
  }
  throw lastError ?? new AppError("validation", "No model to call");
}

/** `onEvent`, noting that the caller was told something (after which no fallback may take over). */
function noting(onEvent: (event: TurnEvent) => void, told: { any: boolean }) {
  return (event: TurnEvent) => {
    told.any = true;
    onEvent(event);
  };
}
