// A service started with the default configuration in a scratch directory, for scripts that write files
// from what the service describes (its OpenAPI document): the console's answer types, the API reference.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import type { OpenApiDocument } from "./api-reference/render.ts";

type Service = Awaited<ReturnType<typeof createAgentOS>>;

/** Runs `use` against a service started with the default configuration, then stops it. */
export async function withDefaultService<T>(
  use: (service: Service, document: OpenApiDocument) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "agentos-default-service-"));
  const service = await createAgentOS({
    ...loadConfig({
      AGENTOS_DATA_DIR: dir,
      AGENTOS_API_KEY: "default-service-admin-key-0123",
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
