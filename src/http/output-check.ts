import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { FunctionRegistry } from "../engine/function-registry.ts";
import { AppError } from "../shared/errors.ts";
import { isNoContent, jsonSchemaOf } from "./openapi.ts";

/** Throws when a function's answer is not what its `output` schema documents. */
export type OutputCheck = (functionId: string, answer: unknown) => void;

/**
 * The OpenAPI document promises each answer's shape (AGENTOS_CHECK_OUTPUTS, on in the tests): the
 * answer as sent (after JSON) is validated against the very JSON Schema the document publishes, so an
 * undocumented or missing field fails the request that showed it instead of a generated client.
 */
export function outputChecker(functions: FunctionRegistry): OutputCheck {
  const ajv = new Ajv2020({ allErrors: false, strict: false, validateFormats: false });
  const validators = new Map<string, ValidateFunction | null>();
  const validatorOf = (functionId: string): ValidateFunction | null => {
    let validate = validators.get(functionId);
    if (validate === undefined) {
      const schema = jsonSchemaOf(functions.get(functionId)?.output, "output");
      validate = schema ? ajv.compile(schema) : null;
      validators.set(functionId, validate);
    }
    return validate;
  };
  return (functionId, answer) => {
    const output = functions.get(functionId)?.output;
    if (!output) return;
    const empty = answer === undefined || answer === null;
    if (empty !== isNoContent(output)) {
      throw new AppError(
        "internal",
        `The answer of ${functionId} ${empty ? "is empty (204) but its output documents a body" : "has a body but its output documents none (204)"}`,
      );
    }
    const validate = validatorOf(functionId);
    if (empty || !validate) return;
    if (validate(JSON.parse(JSON.stringify(answer)))) return;
    const problem = validate.errors?.[0];
    throw new AppError(
      "internal",
      `The answer of ${functionId} does not match its documented output: ${problem?.instancePath || "(root)"} ${problem?.message} ${JSON.stringify(problem?.params)}`,
    );
  };
}
