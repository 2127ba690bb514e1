import { z } from "zod";
import type { RegisteredFunction } from "../../src/engine/types.ts";
import { jsonSchemaOf } from "../../src/http/openapi.ts";
import { hoistDefinitions } from "../../src/http/openapi-refs.ts";
import { comment, type Schema, typeOf } from "../../src/shared/json-schema-types.ts";

type Described = Pick<RegisteredFunction, "id" | "description" | "input" | "output">;

/** What a call of the function answers: its documented output as its handler may return it. */
function answerType(fn: Described, schemas: Record<string, Schema | undefined>): string {
  if (fn.output instanceof z.ZodVoid) return "void";
  return typeOf(schemas.output, "    ");
}

/**
 * The module every worker's engine calls are typed by: `Functions`, each registered function's input
 * (as a caller writes it: defaults optional) and answer, by id. A function that documents no answer
 * answers `unknown`, which a caller must check before use.
 */
export function renderFunctionTypes(functions: readonly Described[]): string {
  const sorted = [...functions].sort((a, b) => a.id.localeCompare(b.id));
  const byId: Record<string, Record<string, Schema | undefined>> = {};
  for (const fn of sorted) {
    byId[fn.id] = { input: jsonSchemaOf(fn.input, "input"), output: jsonSchemaOf(fn.output, "input") };
  }
  const shared = hoistDefinitions(byId as Record<string, unknown>) as Record<string, Schema>;
  const declarations = Object.entries(shared)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([name, schema]) => `${comment(schema.description, "")}export type ${name} = ${typeOf(schema)};\n\n`,
    );
  const entries = sorted.map((fn) => {
    const schemas = byId[fn.id] as Record<string, Schema | undefined>;
    return [
      `${comment(fn.description, "  ")}  ${JSON.stringify(fn.id)}: {\n`,
      `    input: ${typeOf(schemas.input, "    ")};\n`,
      `    output: ${answerType(fn, schemas)};\n`,
      "  };\n",
    ].join("");
  });
  return [
    "// Written by `npm run engine:types` from the functions a default service registers: do not edit by hand.\n",
    "// test/engine/function-types.test.ts fails when it no longer matches them.\n\n",
    ...declarations,
    "/** Every function's input and answer, by its id: what `call` (src/engine/call.ts) is typed by. */\n",
    "export interface Functions {\n",
    ...entries,
    "}\n",
  ].join("");
}
