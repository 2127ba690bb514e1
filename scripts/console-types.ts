// Writes the console's answer types (src/console/web/generated/answers.ts) from the OpenAPI document of a
// service started with the default configuration in a scratch directory: `npm run console:types`.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderAnswerTypes } from "../src/http/openapi-types.ts";
import { withDefaultService } from "./default-service.ts";

export const ANSWER_TYPES_FILE = join(
  import.meta.dirname,
  "..",
  "src",
  "console",
  "web",
  "generated",
  "answers.ts",
);

/** The module's text as the current code would write it. */
export const currentAnswerTypes = (): Promise<string> =>
  withDefaultService(async (_service, document) =>
    renderAnswerTypes(document as Parameters<typeof renderAnswerTypes>[0]),
  );

if (import.meta.main) {
  writeFileSync(ANSWER_TYPES_FILE, await currentAnswerTypes());
  console.log(`agentos: wrote ${ANSWER_TYPES_FILE}`);
}
