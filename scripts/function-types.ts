// Writes the engine's map of function types (src/engine/generated/functions.ts) from the functions a
// service started with the default configuration registers: `npm run engine:types`.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { withDefaultService } from "./default-service.ts";
import { renderFunctionTypes } from "./function-types/render.ts";

export const FUNCTION_TYPES_FILE = join(
  import.meta.dirname,
  "..",
  "src",
  "engine",
  "generated",
  "functions.ts",
);

/** The module's text as the current code would write it. */
export const currentFunctionTypes = (): Promise<string> =>
  withDefaultService(async (service) => renderFunctionTypes(service.engine.functions.list()));

if (import.meta.main) {
  writeFileSync(FUNCTION_TYPES_FILE, await currentFunctionTypes());
  console.log(`agentos: wrote ${FUNCTION_TYPES_FILE}`);
}
