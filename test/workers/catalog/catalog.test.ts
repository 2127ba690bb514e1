import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { envPrefix } from "../../../src/llm/providers.ts";
import { AppError } from "../../../src/shared/errors.ts";
import {
  aliasTable,
  defaultModel,
  listModels,
  loadCatalog,
  parseBuiltin,
  resolveModel,
} from "../../../src/workers/catalog/catalog.ts";
import { TIERS } from "../../../src/workers/catalog/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "agentos-catalog-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function overrideFile(content: unknown): string {
  const file = join(dir, `override-${files++}.json`);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

const catalog = loadCatalog({ env: {} });

describe("built-in catalog", () => {
  it("holds 47 entries across the five tiers, 43 of them with tools", () => {
    expect(catalog.models).toHaveLength(47);
    expect(new Set(catalog.models.map((model) => model.tier))).toEqual(new Set(TIERS));
    expect(catalog.models.filter((model) => model.supportsTools)).toHaveLength(43);
    const perTier = Object.fromEntries(TIERS.map((tier) => [tier, listModels(catalog, { tier }).length]));
    expect(perTier).toEqual({ frontier: 5, smart: 16, balanced: 16, fast: 7, local: 3 });
  });

  it("serves the local tier from Ollama, vLLM and LM Studio at zero price", () => {
    const local = listModels(catalog, { tier: "local" });
    expect(new Set(local.map((model) => model.provider))).toEqual(new Set(["ollama", "vllm", "lmstudio"]));
    for (const model of local) {
      expect(model).toMatchObject({ inputPrice: 0, outputPrice: 0, local: true });
    }
    expect(catalog.models.filter((model) => model.local)).toEqual(local);
  });

  it("has exactly the entry fields of the spec, unique ids, and known providers", () => {
    const fields = [
      "contextWindow",
      "id",
      "inputPrice",
      "local",
      "maxOutput",
      "name",
      "outputPrice",
      "provider",
      "supportsTools",
      "supportsVision",
      "tier",
    ];
    for (const model of catalog.models) {
      expect(Object.keys(model).sort()).toEqual(fields);
      expect(catalog.providerMap.has(model.provider)).toBe(true);
    }
    expect(new Set(catalog.models.map((model) => model.id)).size).toBe(47);
  });

  it("resolves every alias to an existing id", () => {
    const raw = parseBuiltin().aliases;
    expect(Object.keys(raw).length).toBeGreaterThan(40);
    for (const [alias, id] of Object.entries(raw)) {
      expect(catalog.byId.has(id), `${alias} -> ${id}`).toBe(true);
      expect(resolveModel(catalog, alias).id).toBe(id);
    }
    expect(aliasTable(catalog)).toEqual(raw);
  });

  it("has a shortcut per tier pointing into that tier", () => {
    for (const tier of TIERS) expect(resolveModel(catalog, tier).tier).toBe(tier);
    expect(resolveModel(catalog, "smart").id).toBe("claude-sonnet-4-6");
    expect(resolveModel(catalog, "local").provider).toBe("ollama");
  });

  it("defaults agents to a smart-tier model", () => {
    expect(defaultModel(catalog)).toMatchObject({ id: "claude-sonnet-4-6", tier: "smart" });
  });

  it("lists local providers at loopback with their base-URL variable", () => {
    const local = catalog.providers.filter((provider) => provider.local);
    expect(local.map(({ id, baseUrl, envKey }) => ({ id, baseUrl, envKey }))).toEqual([
      { id: "ollama", baseUrl: "http://127.0.0.1:11434/v1", envKey: "OLLAMA_BASE_URL" },
      { id: "vllm", baseUrl: "http://127.0.0.1:8000/v1", envKey: "VLLM_BASE_URL" },
      { id: "lmstudio", baseUrl: "http://127.0.0.1:1234/v1", envKey: "LMSTUDIO_BASE_URL" },
    ]);
    expect(catalog.providerMap.get("anthropic")?.driver).toBe("anthropic");
    expect(catalog.providerMap.get("openai")?.driver).toBe("openai");
    expect(catalog.providerMap.get("gemini")?.driver).toBe("google");
  });
});

describe("resolveModel", () => {
  it("accepts ids, aliases and ids in any case", () => {
    expect(resolveModel(catalog, "gpt-4o").provider).toBe("openai");
    expect(resolveModel(catalog, "Sonnet").id).toBe("claude-sonnet-4-6");
    expect(resolveModel(catalog, "GPT-4O").id).toBe("gpt-4o");
    expect(resolveModel(catalog, "qwen/qwen2.5-coder-32b-instruct").provider).toBe("vllm");
  });

  it("accepts <provider>/<id> for a catalog id of that provider", () => {
    expect(resolveModel(catalog, "anthropic/claude-sonnet-4-6").id).toBe("claude-sonnet-4-6");
    expect(resolveModel(catalog, "ollama/llama3.3")).toEqual(catalog.byId.get("llama3.3"));
  });

  it("accepts any model of a local provider, free", () => {
    expect(resolveModel(catalog, "ollama/some-model:7b")).toEqual({
      id: "some-model:7b",
      provider: "ollama",
      name: "some-model:7b (Ollama)",
      tier: "local",
      contextWindow: 8192,
      maxOutput: 4096,
      inputPrice: 0,
      outputPrice: 0,
      supportsTools: true,
      supportsVision: false,
      local: true,
    });
    expect(resolveModel(catalog, "vllm/meta-llama/Llama-3.1-8B-Instruct")).toMatchObject({
      id: "meta-llama/Llama-3.1-8B-Instruct",
      provider: "vllm",
    });
  });

  it("refuses unknown models, and unlisted models of hosted providers", () => {
    expect(() => resolveModel(catalog, "gpt-17")).toThrow(
      'Unknown model "gpt-17": not a catalog id or alias; GET /api/models lists them',
    );
    expect(() => resolveModel(catalog, "openai/gpt-17")).toThrow(/local providers only/);
    expect(() => resolveModel(catalog, "anthropic/gpt-4o")).toThrow(AppError);
    expect(() => resolveModel(catalog, "nowhere/model")).toThrow(/Unknown model "nowhere\/model"/);
    expect(() => resolveModel(catalog, "ollama/")).toThrow(AppError);
    try {
      resolveModel(catalog, "__proto__");
    } catch (error) {
      expect(error).toMatchObject({ code: "not_found", status: 404 });
    }
  });

  it("never throws anything but an AppError, for any string", () => {
    const names = fc.oneof(
      fc.string(),
      fc.string({ unit: "grapheme" }),
      fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "/", "ollama/", "/x"),
      fc
        .tuple(fc.constantFrom("ollama", "openai", "vllm", "x", "__proto__"), fc.string())
        .map(([p, m]) => `${p}/${m}`),
    );
    fc.assert(
      fc.property(names, (name) => {
        try {
          const model = resolveModel(catalog, name);
          expect(catalog.providerMap.has(model.provider)).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(AppError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe("listModels", () => {
  it("filters by tier and provider", () => {
    expect(listModels(catalog, { provider: "anthropic" }).map((model) => model.id)).toEqual([
      "claude-opus-4-6",
      "claude-sonnet-4-6",
      "claude-haiku-4-5",
    ]);
    expect(listModels(catalog, { provider: "openai", tier: "fast" }).map((model) => model.id)).toEqual([
      "gpt-4o-mini",
    ]);
    expect(() => listModels(catalog, { provider: "nope" })).toThrow('Unknown provider "nope"');
  });
});

describe("override file", () => {
  it("adds a model and changes a price, keeping the other fields", () => {
    const file = overrideFile({
      models: [
        { id: "gpt-4o", inputPrice: 2, outputPrice: 8 },
        {
          id: "my-model",
          provider: "openai",
          name: "My Model",
          tier: "fast",
          contextWindow: 64000,
          maxOutput: 4096,
          inputPrice: 0.1,
          outputPrice: 0.2,
          supportsTools: true,
          supportsVision: false,
          local: false,
        },
      ],
      aliases: { mine: "my-model" },
      defaults: { smart: "gpt-4o" },
    });
    const merged = loadCatalog({ env: {}, catalogFile: file });
    expect(merged.models).toHaveLength(48);
    expect(resolveModel(merged, "gpt-4o")).toMatchObject({
      inputPrice: 2,
      outputPrice: 8,
      contextWindow: 128000,
    });
    expect(resolveModel(merged, "mine")).toMatchObject({ id: "my-model", tier: "fast" });
    expect(defaultModel(merged).id).toBe("gpt-4o");
    expect(resolveModel(catalog, "gpt-4o").inputPrice).toBe(2.5);
  });

  it("adds a provider and its models", () => {
    const file = overrideFile({
      providers: [
        {
          id: "my-llm",
          name: "My LLM box",
          baseUrl: "http://10.0.0.5:8080/v1",
          envKey: "MY_LLM_BASE_URL",
          local: true,
          driver: "openai_compat",
        },
      ],
    });
    const merged = loadCatalog({ env: { MY_LLM_BASE_URL: "http://10.0.0.6:8080/v1" }, catalogFile: file });
    expect(merged.providerMap.get("my-llm")?.baseUrl).toBe("http://10.0.0.6:8080/v1");
    expect(resolveModel(merged, "my-llm/phi4")).toMatchObject({ provider: "my-llm", inputPrice: 0 });
  });

  it("opens a local provider to every realm where the operator named its address, and only there", () => {
    expect(catalog.providerMap.get("ollama")?.openToRealms).toBeUndefined();
    const byEnv = loadCatalog({ env: { VLLM_BASE_URL: "http://10.0.0.7:8000/v1" } });
    expect(byEnv.providerMap.get("vllm")?.openToRealms).toBe(true);
    expect(byEnv.providerMap.get("ollama")?.openToRealms).toBeUndefined();
    const file = overrideFile({ providers: [{ id: "ollama", baseUrl: "http://127.0.0.1:11434/v1" }] });
    const byFile = loadCatalog({ env: {}, catalogFile: file });
    expect(byFile.providerMap.get("ollama")?.openToRealms).toBe(true);
    const closedOnPurpose = overrideFile({ providers: [{ id: "lmstudio", openToRealms: false }] });
    expect(
      loadCatalog({ env: {}, catalogFile: closedOnPurpose }).providerMap.get("lmstudio")?.openToRealms,
    ).toBe(false);
  });

  it("stops with the file and the field named", () => {
    const badPrice = overrideFile({ models: [{ id: "gpt-4o", inputPrice: "cheap" }] });
    expect(() => loadCatalog({ env: {}, catalogFile: badPrice })).toThrow(
      `Invalid catalog file ${badPrice}: models.0.inputPrice: Invalid input: expected number, received string`,
    );
    const incomplete = overrideFile({ models: [{ id: "new-model", provider: "openai" }] });
    expect(() => loadCatalog({ env: {}, catalogFile: incomplete })).toThrow(
      /Invalid catalog file .*override-\d+\.json: models\.0\.name: .*a new model needs every field/,
    );
    const typo = overrideFile({ models: [{ id: "gpt-4o", inputPirce: 1 }] });
    expect(() => loadCatalog({ env: {}, catalogFile: typo })).toThrow(
      /models\.0: Unrecognized key: "inputPirce"/,
    );
    const unknownField = overrideFile({ modles: [] });
    expect(() => loadCatalog({ env: {}, catalogFile: unknownField })).toThrow(/modles/);
    const danglingAlias = overrideFile({ aliases: { ghost: "no-such-model" } });
    expect(() => loadCatalog({ env: {}, catalogFile: danglingAlias })).toThrow(
      `Invalid catalog file ${danglingAlias}: aliases.ghost: "no-such-model" is not a catalog id`,
    );
    const shadowing = overrideFile({ aliases: { sonar: "sonar-pro" } });
    expect(() => loadCatalog({ env: {}, catalogFile: shadowing })).toThrow(
      'aliases.sonar: is the id of another model ("sonar"), which always wins',
    );
    const wrongProvider = overrideFile({ models: [{ id: "gpt-4o", provider: "nobody" }] });
    expect(() => loadCatalog({ env: {}, catalogFile: wrongProvider })).toThrow(/unknown provider "nobody"/);
    const notJson = overrideFile("{ models: ");
    expect(() => loadCatalog({ env: {}, catalogFile: notJson })).toThrow(
      `Invalid catalog file ${notJson}: not JSON`,
    );
    const missing = join(dir, "missing.json");
    expect(() => loadCatalog({ env: {}, catalogFile: missing })).toThrow(
      `Cannot read catalog file ${missing}`,
    );
  });
});

describe("base URL variables", () => {
  it("override a provider's base URL by <PROVIDER>_BASE_URL", () => {
    expect(envPrefix("github_copilot")).toBe("GITHUB_COPILOT");
    expect(envPrefix("my-llm")).toBe("MY_LLM");
    const overridden = loadCatalog({
      env: { OPENAI_BASE_URL: "https://proxy.example/v1", OLLAMA_BASE_URL: " http://gpu-box:11434/v1 " },
    });
    expect(overridden.providerMap.get("openai")?.baseUrl).toBe("https://proxy.example/v1");
    expect(overridden.providerMap.get("ollama")?.baseUrl).toBe("http://gpu-box:11434/v1");
    expect(() => loadCatalog({ env: { VLLM_BASE_URL: "not a url" } })).toThrow(
      'Invalid VLLM_BASE_URL: "not a url" is not an http(s) URL',
    );
  });
});
