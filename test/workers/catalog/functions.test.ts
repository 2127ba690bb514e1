import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { systemPrincipal } from "../../../src/engine/types.ts";
import { type CatalogOptions, registerCatalog } from "../../../src/workers/catalog/index.ts";
import type { ModelEntry, ProviderStatus } from "../../../src/workers/catalog/schema.ts";
import { register as registerVault } from "../../../src/workers/vault/index.ts";
import { createStateEngine, createTestEngine } from "../../helpers/engine.ts";

let cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

function catalogEngine(options: Partial<CatalogOptions> = {}): Engine {
  const engine = createTestEngine();
  cleanups.push(() => engine.shutdown());
  registerCatalog(engine.worker("catalog"), { env: {}, ...options });
  return engine;
}

const call = <T>(engine: Engine, function_id: string, payload: Record<string, unknown> = {}) =>
  engine.trigger({ function_id, payload }) as Promise<T>;

const providers = async (engine: Engine) =>
  (await call<{ providers: ProviderStatus[] }>(engine, "catalog::providers")).providers;
const provider = async (engine: Engine, id: string) =>
  (await providers(engine)).find((each) => each.id === id);

/** A stand-in for Ollama that answers GET /v1/models, counting the hits. */
let server: Server;
let serverUrl: string;
let hits = 0;
beforeAll(async () => {
  server = createServer((request, response) => {
    hits++;
    if (request.url === "/v1/models") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ object: "list", data: [{ id: "llama3.3", object: "model" }] }));
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe("catalog functions", () => {
  it("lists models as an object, filtered by tier and provider", async () => {
    const engine = catalogEngine();
    const all = await call<{ models: ModelEntry[] }>(engine, "catalog::models");
    expect(all.models).toHaveLength(47);
    const local = await call<{ models: ModelEntry[] }>(engine, "catalog::models", { tier: "local" });
    expect(local.models.map((model) => model.provider).sort()).toEqual(["lmstudio", "ollama", "vllm"]);
    const fast = await call<{ models: ModelEntry[] }>(engine, "catalog::models", {
      tier: "fast",
      provider: "anthropic",
    });
    expect(fast.models.map((model) => model.id)).toEqual(["claude-haiku-4-5"]);
    await expect(call(engine, "catalog::models", { tier: "cheap" })).rejects.toMatchObject({ status: 400 });
    await expect(call(engine, "catalog::models", { provider: "nobody" })).rejects.toMatchObject({
      status: 404,
    });
    await expect(call(engine, "catalog::models", { teir: "fast" })).rejects.toMatchObject({ status: 400 });
  });

  it("answers a model's entry with its provider's configuration in one call", async () => {
    const engine = catalogEngine();
    const choice = (await call(engine, "catalog::choice", { model: "opus" })) as {
      model: { id: string; provider: string };
      provider: { id: string };
    };
    expect(choice.model).toMatchObject({ id: "claude-opus-4-6", provider: "anthropic" });
    expect(choice.provider).toEqual(await call(engine, "catalog::provider", { id: "anthropic" }));
    await expect(call(engine, "catalog::choice", { model: "gpt-17" })).rejects.toMatchObject({ status: 404 });
  });

  it("resolves ids, aliases and local provider/model names; unknown is 404", async () => {
    const engine = catalogEngine();
    expect(await call(engine, "catalog::resolve", { model: "opus" })).toMatchObject({
      id: "claude-opus-4-6",
      tier: "frontier",
      inputPrice: 15,
    });
    expect(await call(engine, "catalog::resolve", { model: "lmstudio/qwen3-8b" })).toMatchObject({
      id: "qwen3-8b",
      provider: "lmstudio",
      inputPrice: 0,
      outputPrice: 0,
    });
    await expect(call(engine, "catalog::resolve", { model: "gpt-17" })).rejects.toMatchObject({
      status: 404,
      message: 'Unknown model "gpt-17": not a catalog id or alias; GET /api/models lists them',
    });
  });

  it("returns the alias table and the default model", async () => {
    const engine = catalogEngine();
    const { aliases } = await call<{ aliases: Record<string, string> }>(engine, "catalog::aliases");
    expect(aliases).toMatchObject({ smart: "claude-sonnet-4-6", local: "llama3.3", balanced: "o4-mini" });
    expect(await call(engine, "catalog::default_model")).toMatchObject({
      id: "claude-sonnet-4-6",
      tier: "smart",
    });
  });

  it("registers GET routes for models, aliases, embedding models and providers, and the provider test route", () => {
    const engine = catalogEngine();
    const routes = engine.triggers
      .list()
      .filter((trigger) => trigger.type === "http" && trigger.worker === "catalog")
      .map((trigger) => [trigger.function_id, trigger.config]);
    expect(routes).toEqual([
      ["catalog::test_provider", { api_path: "/api/providers/:provider/test", http_method: "POST" }],
      ["catalog::models", { api_path: "/api/models", http_method: "GET", array_list: "models" }],
      ["catalog::aliases", { api_path: "/api/models/aliases", http_method: "GET" }],
      [
        "catalog::embedding_models",
        { api_path: "/api/models/embeddings", http_method: "GET", array_list: "models" },
      ],
      ["catalog::providers", { api_path: "/api/providers", http_method: "GET" }],
    ]);
  });

  it("refuses to start on a bad catalog file, naming the file and the field", () => {
    const dir = mkdtempSync(join(tmpdir(), "agentos-catalog-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "catalog.json");
    writeFileSync(file, JSON.stringify({ models: [{ id: "o3", contextWindow: -1 }] }));
    expect(() => catalogEngine({ catalogFile: file })).toThrow(
      `Invalid catalog file ${file}: models.0.contextWindow: Too small: expected number to be >0`,
    );
  });
});

describe("provider availability", () => {
  it("counts a hosted provider available when its key variable is set, never showing the key", async () => {
    const engine = catalogEngine({ env: { OPENAI_API_KEY: "sk-secret-value-123" } });
    const list = await providers(engine);
    expect(list.find((each) => each.id === "openai")).toEqual({
      id: "openai",
      name: "OpenAI",
      baseUrl: "https://api.openai.com/v1",
      local: false,
      driver: "openai",
      available: true,
    });
    expect(list.find((each) => each.id === "anthropic")).toMatchObject({
      available: false,
      reason: expect.stringContaining("ANTHROPIC_API_KEY"),
    });
    expect(JSON.stringify(list)).not.toContain("sk-secret-value-123");
  });

  it("counts a hosted provider available when the vault holds its key", async () => {
    const { engine, close } = createStateEngine();
    cleanups.push(close);
    registerVault(engine.worker("vault"), { key: randomBytes(32) });
    registerCatalog(engine.worker("catalog"), { env: {} });
    await engine.trigger({
      function_id: "vault::set",
      payload: { key: "provider:anthropic:api_key", value: "sk-ant-secret-value" },
      auth: systemPrincipal,
    });
    const list = await providers(engine);
    expect(list.find((each) => each.id === "anthropic")?.available).toBe(true);
    expect(list.find((each) => each.id === "openai")?.available).toBe(false);
    expect(JSON.stringify(list)).not.toContain("sk-ant-secret-value");
  });

  it("treats a missing vault as no key", async () => {
    const engine = catalogEngine();
    expect(await provider(engine, "anthropic")).toMatchObject({ available: false });
  });

  it("counts a local provider available when its endpoint answers GET /models, cached for 10 s", async () => {
    const engine = catalogEngine({ env: { OLLAMA_BASE_URL: `${serverUrl}/v1` } });
    const before = hits;
    expect(await provider(engine, "ollama")).toEqual({
      id: "ollama",
      name: "Ollama",
      baseUrl: `${serverUrl}/v1`,
      local: true,
      driver: "openai_compat",
      available: true,
      openToRealms: true,
    });
    expect(hits).toBe(before + 1);
    await provider(engine, "ollama");
    expect(hits).toBe(before + 1);
  });

  it("reads a closed port as unavailable, with the reason", async () => {
    const port = await closedPort();
    const engine = catalogEngine({ env: { OLLAMA_BASE_URL: `http://127.0.0.1:${port}/v1` } });
    expect(await provider(engine, "ollama")).toMatchObject({
      available: false,
      reason: `GET http://127.0.0.1:${port}/v1/models failed: ECONNREFUSED`,
    });
  });

  it("reads an error status or a silent endpoint as unavailable", async () => {
    const engine = catalogEngine({ env: { VLLM_BASE_URL: `${serverUrl}/nope` } });
    expect(await provider(engine, "vllm")).toMatchObject({
      available: false,
      reason: `GET ${serverUrl}/nope/models answered HTTP 404`,
    });
    const hanging: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      });
    const silent = catalogEngine({ fetch: hanging });
    const started = Date.now();
    expect(await provider(silent, "lmstudio")).toMatchObject({
      available: false,
      reason: "GET http://127.0.0.1:1234/v1/models did not answer within 1000 ms",
    });
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
