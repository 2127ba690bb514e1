// Writes the console's answer types (src/console/web/generated/answers.ts) from the OpenAPI document of a
// service started with the default configuration in a scratch directory: `npm run console:types`.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import { renderAnswerTypes } from "../src/http/openapi-types.ts";

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
export async function currentAnswerTypes(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "agentos-console-types-"));
  const service = await createAgentOS({
    ...loadConfig({
      AGENTOS_DATA_DIR: dir,
      AGENTOS_API_KEY: "console-types-admin-key-0123",
      AGENTOS_LOG_LEVEL: "silent",
    }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
    rateLimits: false as const,
  });
  try {
    const document = await service.engine.trigger({ function_id: "api::openapi", payload: {} });
    return renderAnswerTypes(document as Parameters<typeof renderAnswerTypes>[0]);
  } finally {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  writeFileSync(ANSWER_TYPES_FILE, await currentAnswerTypes());
  console.log(`agentos: wrote ${ANSWER_TYPES_FILE}`);
}
