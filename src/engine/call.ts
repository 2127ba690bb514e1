import type { Functions } from "./generated/functions.ts";
import type { TriggerFn, TriggerRequest } from "./types.ts";

/** A function a default service registers (src/engine/generated/functions.ts, `npm run engine:types`). */
export type FunctionId = keyof Functions;
/** What a caller hands the function: its input schema as written, defaults optional. */
export type InputOf<Id extends FunctionId> = Functions[Id]["input"];
/** What the function answers: its documented output schema (`unknown` where it documents none). */
export type OutputOf<Id extends FunctionId> = Functions[Id]["output"];
export type CallOptions = Omit<TriggerRequest, "function_id" | "payload">;

/**
 * Calls a function through the engine, typed by its registered schemas: a renamed input or answer field
 * no longer compiles at the caller. The answer is not checked again at run time: the function's handler
 * is held to its output schema by the compiler where it registers (WorkerClient.registerFunction).
 */
export function call<Id extends FunctionId>(
  trigger: TriggerFn,
  id: Id,
  input: InputOf<Id>,
  options: CallOptions = {},
): Promise<OutputOf<Id>> {
  return trigger({ ...options, function_id: id, payload: input }) as Promise<OutputOf<Id>>;
}
