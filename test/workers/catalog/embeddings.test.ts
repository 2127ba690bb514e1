import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { loadCatalog, resolveModel } from "../../../src/workers/catalog/catalog.ts";
import {
  defaultEmbeddingModel,
  listEmbeddingModels,
  resolveEmbeddingModel,
} from "../../../src/workers/catalog/embedding-models.ts";
import { registerCatalog } from "../../../src/workers/catalog/index.ts";
import { createTestEngine } from "../../helpers/engine.ts";

const dir = mkdtempSync(join(tmpdir(), "agentos-embedding-catalog-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
function overrideFile(content: unknown): string {
  const file = join(dir, `override-${files++}.json`);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

const catalog = loadCatalog({ env: {} });

describe("built-in embedding models", () => {
  it("lists OpenAI's, Gemini's and Ollama's with dimensions and prices per million input tokens", () => {
    const table = Object.fromEntries(
      listEmbeddingModels(catalog, {}).map((model) => [
        model.id,
        [model.provider, model.dimensions, model.inputPrice, model.maxBatch],
      ]),
    );
    expect(table).toEqual({
      "text-embedding-3-small": ["openai", 1536, 0.02, 2048],
      "text-embedding-3-large": ["openai", 3072, 0.13, 2048],
      "text-embedding-ada-002": ["openai", 1536, 0.1, 2048],
      "gemini-embedding-001": ["gemini", 3072, 0.15, 100],
      "nomic-embed-text": ["ollama", 768, 0, 128],
      "mxbai-embed-large": ["ollama", 1024, 0, 128],
    });
    expect(listEmbeddingModels(catalog, { provider: "ollama" }).every((model) => model.local)).toBe(true);
  });

  it("keeps the chat models as they were: 47 entries, none of them an embedding model", () => {
    expect(catalog.models).toHaveLength(47);
    const chatIds = new Set(catalog.models.map((model) => model.id.toLowerCase()));
    for (const model of catalog.embeddingModels) expect(chatIds.has(model.id.toLowerCase())).toBe(false);
  });

  it("defaults to text-embedding-3-small, or AGENTOS_EMBEDDING_MODEL", () => {
    expect(defaultEmbeddingModel(catalog, {}).id).toBe("text-embedding-3-small");
    expect(defaultEmbeddingModel(catalog, { AGENTOS_EMBEDDING_MODEL: "nomic" }).id).toBe("nomic-embed-text");
    expect(defaultEmbeddingModel(catalog, { AGENTOS_EMBEDDING_MODEL: "ollama/bge-m3" })).toMatchObject({
      id: "bge-m3",
      provider: "ollama",
      inputPrice: 0,
    });
  });
});

describe("resolveEmbeddingModel", () => {
  it("takes an id, an alias or either in any case", () => {
    expect(resolveEmbeddingModel(catalog, "text-embedding-3-large").dimensions).toBe(3072);
    expect(resolveEmbeddingModel(catalog, "embedding").id).toBe("text-embedding-3-small");
    expect(resolveEmbeddingModel(catalog, "Gemini-Embedding").id).toBe("gemini-embedding-001");
    expect(resolveEmbeddingModel(catalog, " TEXT-EMBEDDING-ADA-002 ").id).toBe("text-embedding-ada-002");
    expect(resolveEmbeddingModel(catalog, "local-embedding")).toMatchObject({
      id: "nomic-embed-text",
      local: true,
    });
  });

  it("takes <provider>/<model>: the listed entry, else an unlisted model with no known dimensions", () => {
    expect(resolveEmbeddingModel(catalog, "ollama/mxbai-embed-large").dimensions).toBe(1024);
    const unlisted = resolveEmbeddingModel(catalog, "ollama/snowflake-arctic-embed:l");
    expect(unlisted).toEqual({
      id: "snowflake-arctic-embed:l",
      provider: "ollama",
      name: "snowflake-arctic-embed:l (Ollama)",
      maxInput: 8192,
      maxBatch: 128,
      inputPrice: 0,
      local: true,
    });
    // A hosted provider's unlisted model is charged as the dearest listed one, never free (a realm key
    // could otherwise spend the operator's key past every budget).
    const dearest = Math.max(
      ...catalog.embeddingModels.filter((entry) => !entry.local).map((entry) => entry.inputPrice),
    );
    expect(dearest).toBeGreaterThan(0);
    expect(resolveEmbeddingModel(catalog, "openai/text-embedding-4")).toMatchObject({
      id: "text-embedding-4",
      provider: "openai",
      maxBatch: 2048,
      inputPrice: dearest,
      local: false,
    });
    expect(resolveEmbeddingModel(catalog, "gemini/gemini-embedding-2")).toMatchObject({ maxBatch: 100 });
    expect(resolveEmbeddingModel(catalog, "vllm/BAAI/bge-m3")).toMatchObject({ id: "BAAI/bge-m3" });
  });

  it("never answers a chat model, and says which embedding models there are", () => {
    for (const name of ["gpt-4o", "sonnet", "openai/gpt-4o", "ollama/llama3.3"]) {
      const error = captured(() => resolveEmbeddingModel(catalog, name));
      expect(error, name).toMatchObject({ status: 404, message: expect.stringContaining("chat model") });
      expect(error?.message, name).toContain("text-embedding-3-small");
    }
    expect(captured(() => resolveEmbeddingModel(catalog, "no-such-embedder"))).toMatchObject({
      status: 404,
      message: expect.stringContaining("is not an embedding model"),
    });
    expect(captured(() => resolveEmbeddingModel(catalog, "nowhere/model"))).toMatchObject({ status: 404 });
  });

  it("refuses a provider without embeddings (Anthropic) with a 400 naming it", () => {
    expect(captured(() => resolveEmbeddingModel(catalog, "anthropic/claude-embed"))).toMatchObject({
      status: 400,
      message: expect.stringContaining("anthropic"),
    });
  });

  it("answers an embedding model or a 4xx for any input (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (name) => {
        try {
          const model = resolveEmbeddingModel(catalog, name);
          // Never a chat model of the provider that serves it.
          expect(catalog.byLowerId.get(model.id.toLowerCase())?.provider).not.toBe(model.provider);
        } catch (error) {
          expect((error as { status?: number }).status).toBeGreaterThanOrEqual(400);
          expect((error as { status?: number }).status).toBeLessThan(500);
        }
      }),
    );
  });
});

describe("chat model resolution", () => {
  it("never answers an embedding model, by id, alias or <provider>/<model>", () => {
    for (const name of ["text-embedding-3-small", "embedding", "nomic", "ollama/nomic-embed-text"]) {
      expect(
        captured(() => resolveModel(catalog, name)),
        name,
      ).toMatchObject({
        status: 404,
        message: expect.stringContaining("not a chat model"),
      });
    }
    // Other unlisted local models are still chat models.
    expect(resolveModel(catalog, "ollama/qwen3:8b")).toMatchObject({ id: "qwen3:8b", tier: "local" });
  });
});

describe("override file", () => {
  it("adds an embedding model and an alias, changes a price, and moves the default", () => {
    // A new model, a changed price and an alias; the default is given twice below.
    const models = {
      embeddingModels: [
        { id: "text-embedding-3-small", inputPrice: 0.01 },
        {
          id: "bge-m3",
          provider: "vllm",
          name: "BGE-M3 on vLLM",
          dimensions: 1024,
          maxInput: 8192,
          maxBatch: 64,
          inputPrice: 0,
          local: true,
        },
      ],
      embeddingAliases: { bge: "bge-m3" },
    };
    const file = overrideFile({ ...models, defaults: { embedding: "bge" } });
    expect(() => loadCatalog({ env: {}, catalogFile: file })).toThrow(
      'defaults.embedding: "bge" is not an embedding model\'s id',
    );
    const dangling = overrideFile({ embeddingAliases: { bge: "bge-m3" } });
    expect(() => loadCatalog({ env: {}, catalogFile: dangling })).toThrow(
      /embeddingAliases\.bge: "bge-m3" is not an embedding model's id/,
    );
    const good = overrideFile({ ...models, defaults: { embedding: "bge-m3" } });
    const merged = loadCatalog({ env: {}, catalogFile: good });
    expect(resolveEmbeddingModel(merged, "text-embedding-3-small")).toMatchObject({
      inputPrice: 0.01,
      dimensions: 1536,
    });
    expect(resolveEmbeddingModel(merged, "bge")).toMatchObject({ id: "bge-m3", maxBatch: 64 });
    expect(defaultEmbeddingModel(merged, {}).id).toBe("bge-m3");
  });

  it("stops on an embedding model that is wrong: a chat model's id, a provider without embeddings, a missing field", () => {
    const entry = {
      name: "X",
      dimensions: 8,
      maxInput: 512,
      maxBatch: 8,
      inputPrice: 0,
      local: false,
    };
    const chatId = overrideFile({ embeddingModels: [{ ...entry, id: "gpt-4o", provider: "openai" }] });
    expect(() => loadCatalog({ env: {}, catalogFile: chatId })).toThrow(
      "embeddingModels.gpt-4o.id: is also a chat model's id in models",
    );
    const anthropic = overrideFile({
      embeddingModels: [{ ...entry, id: "claude-embed", provider: "anthropic" }],
    });
    expect(() => loadCatalog({ env: {}, catalogFile: anthropic })).toThrow(
      'embeddingModels.claude-embed.provider: "anthropic" (driver anthropic) offers no embeddings',
    );
    const incomplete = overrideFile({ embeddingModels: [{ id: "new-embedder", provider: "openai" }] });
    expect(() => loadCatalog({ env: {}, catalogFile: incomplete })).toThrow(
      /embeddingModels\.0\.name: .*a new embedding model needs every field/,
    );
  });
});

describe("catalog functions", () => {
  const engines: Engine[] = [];
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.shutdown();
  });
  const engineWith = (env: NodeJS.ProcessEnv = {}) => {
    const engine = createTestEngine();
    engines.push(engine);
    registerCatalog(engine.worker("catalog"), { env });
    return engine;
  };

  it("catalog::resolve_embedding answers the entry with its provider; the default without a model", async () => {
    const engine = engineWith({ AGENTOS_EMBEDDING_MODEL: "gemini-embedding" });
    const named = (await engine.trigger({
      function_id: "catalog::resolve_embedding",
      payload: { model: "embedding-large" },
    })) as { model: { id: string }; provider: { id: string; driver: string } };
    expect(named.model.id).toBe("text-embedding-3-large");
    expect(named.provider).toMatchObject({ id: "openai", driver: "openai" });
    const fallback = (await engine.trigger({ function_id: "catalog::resolve_embedding", payload: {} })) as {
      model: { id: string };
      provider: { id: string };
    };
    expect(fallback).toMatchObject({ model: { id: "gemini-embedding-001" }, provider: { id: "gemini" } });
  });

  it("catalog::embedding_models lists them, by provider too", async () => {
    const engine = engineWith();
    const page = (await engine.trigger({
      function_id: "catalog::embedding_models",
      payload: { provider: "openai" },
    })) as { models: Array<{ id: string }>; nextCursor: string | null };
    expect(page.models.map((model) => model.id)).toEqual([
      "text-embedding-3-small",
      "text-embedding-3-large",
      "text-embedding-ada-002",
    ]);
    expect(page.nextCursor).toBeNull();
  });

  it("refuses to start on an AGENTOS_EMBEDDING_MODEL that is no embedding model", () => {
    expect(() => engineWith({ AGENTOS_EMBEDDING_MODEL: "gpt-4o" })).toThrow(
      /Invalid AGENTOS_EMBEDDING_MODEL: "gpt-4o" is the chat model gpt-4o/,
    );
  });
});

function captured(run: () => unknown): { status?: number; message: string } | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error as { status?: number; message: string };
  }
}
