// Writes the API reference (docs/api-reference.md) from the OpenAPI document of a service started with
// the default configuration in a scratch directory: `npm run api:reference`.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderApiReference } from "./api-reference/render.ts";
import { withDefaultService } from "./default-service.ts";

export const API_REFERENCE_FILE = join(import.meta.dirname, "..", "docs", "api-reference.md");

const ROOT = join(import.meta.dirname, "..");

/** Markdown as the repository's formatter (`biome check`) writes it: tables aligned, so it stays clean. */
export function formatMarkdown(text: string): string {
  const biome = spawnSync(
    join(ROOT, "node_modules", ".bin", "biome"),
    ["format", "--stdin-file-path=docs/api-reference.md"],
    {
      cwd: ROOT,
      input: text,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (biome.status !== 0) throw new Error(`biome format failed: ${biome.stderr || biome.error}`);
  return biome.stdout;
}

/** The reference's text as the current code would write it. */
export const currentApiReference = (): Promise<string> =>
  withDefaultService(async (_service, document) => formatMarkdown(renderApiReference(document)));

if (import.meta.main) {
  writeFileSync(API_REFERENCE_FILE, await currentApiReference());
  console.log(`agentos: wrote ${API_REFERENCE_FILE}`);
}
