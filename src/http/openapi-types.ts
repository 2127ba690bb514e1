/**
 * TypeScript types written from the OpenAPI document: what each routed function answers, keyed by its
 * operationId (the function's id). The console reads its answers through these types, so a field the
 * service renames or drops no longer compiles there instead of showing blank in a browser.
 */

import { comment, type Schema, typeOf } from "../shared/json-schema-types.ts";

export { typeOf };

interface Operation {
  operationId?: string;
  description?: string;
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

/** The JSON answer of an operation's first success status; undefined when it answers none (204, events). */
function answerOf(operation: Operation): Schema | undefined {
  const statuses = Object.keys(operation.responses ?? {})
    .filter((status) => /^2\d\d$/.test(status))
    .sort();
  for (const status of statuses) {
    const schema = operation.responses?.[status]?.content?.["application/json"]?.schema;
    if (schema) return schema;
  }
  return undefined;
}

/**
 * The module the console imports: `Answers`, each routed function's success answer by its id (functions
 * that answer no JSON are left out), and the shared schemas those answers refer to.
 */
export function renderAnswerTypes(document: {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}): string {
  const answers = new Map<string, { schema: Schema; description?: string }>();
  for (const path of Object.keys(document.paths).sort()) {
    for (const method of Object.keys(document.paths[path] ?? {}).sort()) {
      const operation = document.paths[path]?.[method] as Operation;
      const schema = answerOf(operation);
      if (!operation.operationId || !schema || answers.has(operation.operationId)) continue;
      answers.set(operation.operationId, { schema, description: operation.description });
    }
  }
  const shared = Object.entries(document.components?.schemas ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, schema]) => `${comment(schema.description, "")}export type ${name} = ${typeOf(schema)};\n`);
  // An answer the same as one written before (the migrate::<framework> functions, say) names that one.
  const written = new Map<string, string>();
  const entries = [...answers.keys()].sort().map((id) => {
    const answer = answers.get(id) as { schema: Schema; description?: string };
    const shape = JSON.stringify(answer.schema);
    const same = written.get(shape);
    if (same === undefined) written.set(shape, id);
    const type = same === undefined ? typeOf(answer.schema, "  ") : `Answers[${JSON.stringify(same)}]`;
    return `${comment(answer.description, "  ")}  ${JSON.stringify(id)}: ${type};\n`;
  });
  return [
    "// Written by `npm run console:types` from the service's OpenAPI document: do not edit by hand.\n",
    "// test/console/answer-types.test.ts fails when it no longer matches the document.\n\n",
    ...shared.map((line) => `${line}\n`),
    "/** What each routed function answers, by its id (the route's operationId). */\n",
    "export interface Answers {\n",
    ...entries,
    "}\n",
  ].join("");
}
