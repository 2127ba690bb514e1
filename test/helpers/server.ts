import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentOS, createAgentOS } from "../../src/app.ts";
import { type Config, loadConfig } from "../../src/config/env.ts";
import type { IiiLimits } from "../../src/engine/iii/limits.ts";
import type { Logger } from "../../src/shared/logger.ts";

export const TEST_ADMIN_KEY = "test-admin-key-0123456789abcdef";

/**
 * Where the unused keys below point: a provider that refuses every call at once (401, which is never
 * retried), so an agent a test wakes without a model of its own fails fast instead of trying the network.
 */
const REFUSING_PROVIDER = await new Promise<string>((resolve) => {
  const refusing = createServer((request, response) => {
    request.resume();
    response.writeHead(401, { "content-type": "application/json" }).end(
      JSON.stringify({
        error: { message: "a test's unused key: no model answers here", type: "invalid_request_error" },
      }),
    );
  });
  refusing.unref();
  refusing.listen(0, "127.0.0.1", () =>
    resolve(`http://127.0.0.1:${(refusing.address() as AddressInfo).port}`),
  );
});

/**
 * Keys for the default model's provider and OpenAI, never used for a real call: agents may only be
 * created on a configured provider, and most tests create agents they never talk to (one that is woken
 * gets a 401 at once). A test about a missing key, or with a fake model, passes its own `env`.
 */
export const UNUSED_PROVIDER_KEYS = {
  ANTHROPIC_API_KEY: "sk-test-unused-anthropic",
  ANTHROPIC_BASE_URL: REFUSING_PROVIDER,
  OPENAI_API_KEY: "sk-test-unused-openai",
  OPENAI_BASE_URL: `${REFUSING_PROVIDER}/v1`,
} as const;

export interface TestServer {
  service: AgentOS;
  url: string;
  dataDir: string;
  /** fetch against the server with the admin key unless `key` says otherwise (null = no header). */
  request(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Starts the real service (SQLite in a temp dir) on a free port. `dataDir`: an existing data directory
 * instead (a restart on the same data), which close() then leaves in place.
 */
export async function startTestServer(
  overrides: Partial<Config> = {},
  options: { iiiLimits?: Partial<IiiLimits>; logger?: Logger; dataDir?: string } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "agentos-test-"));
  const config: Config = {
    ...loadConfig({
      ...UNUSED_PROVIDER_KEYS,
      AGENTOS_DATA_DIR: dataDir,
      // The declarative files (agents/, config/channels/, workflows/) of a test live in its own directory.
      AGENTOS_HOME: dataDir,
      AGENTOS_API_KEY: TEST_ADMIN_KEY,
      AGENTOS_LOG_LEVEL: "silent",
      // Every answer a test sees is held to the OpenAPI document's schema for it.
      AGENTOS_CHECK_OUTPUTS: "1",
    }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
    engineHost: "127.0.0.1",
    rateLimits: false,
    ...overrides,
  };
  const service = await createAgentOS(config, options);
  const url = await service.listen();
  return {
    service,
    url,
    dataDir,
    request(path, init = {}) {
      const { key = TEST_ADMIN_KEY, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key !== null) headers.set("authorization", `Bearer ${key}`);
      if (json !== undefined) headers.set("content-type", "application/json");
      return fetch(`${url}${path}`, {
        ...rest,
        headers,
        body: json === undefined ? rest.body : JSON.stringify(json),
      });
    },
    async close() {
      await service.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "x-xss-protection": "1; mode=block",
  "strict-transport-security": "max-age=31536000; includeSubDomains",
};

export function securityHeadersOf(response: Response): Record<string, string | null> {
  return Object.fromEntries(Object.keys(SECURITY_HEADERS).map((name) => [name, response.headers.get(name)]));
}

// biome-ignore lint/suspicious/noExplicitAny: assertions read arbitrary JSON bodies
export type JsonBody = any;

export function json(response: Response): Promise<JsonBody> {
  return response.json() as Promise<JsonBody>;
}
