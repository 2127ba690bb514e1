// Writes the API reference (docs/api-reference.md) from the OpenAPI document of a service started with
// the default configuration in a scratch directory: `npm run api:reference`.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import { type OpenApiDocument, renderApiReference } from "./api-reference/render.ts";

export const API_REFERENCE_FILE = join(import.meta.dirname, "..", "docs", "api-reference.md");

type Service = Awaited<ReturnType<typeof createAgentOS>>;

/** Runs `use` against a service started with the default configuration, then stops it. */
export async function withDefaultService<T>(
  use: (service: Service, document: OpenApiDocument) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "agentos-api-reference-"));
  const service = await createAgentOS({
    ...loadConfig({
      AGENTOS_DATA_DIR: dir,
      AGENTOS_API_KEY: "api-reference-admin-key-0123",
      AGENTOS_LOG_LEVEL: "silent",
    }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
    rateLimits: false as const,
  });
  try {
    const document = await service.engine.trigger({ function_id: "api::openapi", payload: {} });
    return await use(service, document as OpenApiDocument);
  } finally {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

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
