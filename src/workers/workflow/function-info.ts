import { call } from "../../engine/call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { isStepCallable } from "../../shared/internal-functions.ts";
import { isJsonObject } from "../../shared/json-object.ts";

/** What runs need to know of a step's function, beyond its id. */
export interface StepFunctionInfo {
  /** The input fields it accepts, when it refuses others (its payload is then filtered to them). */
  fields?: string[];
  /** Not internal by its registration's metadata either: a non-admin key may name it as a step. */
  stepCallable: boolean;
}

export type FunctionInfo = (functionId: string) => Promise<StepFunctionInfo>;

/**
 * engine::functions::info, read once per registered function (a run's steps ask on every run); a function
 * not registered yet is asked again next time, and passes the id-based check only.
 */
export function functionInfoCache(trigger: TriggerFn): FunctionInfo {
  const known = new Map<string, Promise<StepFunctionInfo>>();
  return (functionId) => {
    const cached = known.get(functionId);
    if (cached) return cached;
    const read = call(trigger, "engine::functions::info", { function_id: functionId }).then(
      (info): StepFunctionInfo => {
        const schema = info.request_schema;
        const properties = schema?.properties;
        // Only functions that refuse unknown fields get a filtered payload; the rest see every variable.
        const strict = isJsonObject(properties) && schema?.additionalProperties === false;
        return {
          ...(strict ? { fields: Object.keys(properties) } : {}),
          stepCallable: isStepCallable(functionId, info.metadata),
        };
      },
      () => {
        known.delete(functionId);
        return { stepCallable: isStepCallable(functionId) };
      },
    );
    known.set(functionId, read);
    return read;
  };
}
