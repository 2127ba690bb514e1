import type { WorkerClient } from "../../engine/worker-client.ts";
import { localProviderClosed } from "../../llm/providers.ts";
import { requireAdmin } from "../../shared/access.ts";
import { notFound } from "../../shared/errors.ts";
import { pageOf } from "../../shared/pagination.ts";
import { vaultSecret } from "../../shared/vault-secret.ts";
import { createAvailability } from "./availability.ts";
import { aliasTable, bestUsableModel, listModels, loadCatalog, resolveModel } from "./catalog.ts";
import { defaultEmbeddingModel, listEmbeddingModels, resolveEmbeddingModel } from "./embedding-models.ts";
import { testProvider } from "./provider-test.ts";
import {
  aliasesAnswer,
  choiceAnswer,
  embeddingChoiceAnswer,
  embeddingModelPage,
  embeddingModelsInput,
  emptyInput,
  modelPage,
  modelsInput,
  modelView,
  providerConfigured,
  providerConfiguredInput,
  providerInput,
  providersAnswer,
  providerTestInput,
  providerTestResult,
  providerView,
  resolveEmbeddingInput,
  resolveInput,
} from "./schema.ts";

export interface CatalogOptions {
  env: NodeJS.ProcessEnv;
  /** AGENTOS_CATALOG_FILE: a JSON file adding or replacing models, aliases, providers and defaults. */
  catalogFile?: string;
  /** For the local providers' reachability probe; the global fetch by default. */
  fetch?: typeof fetch;
}

/**
 * The model catalog: models by tier and provider, aliases, provider availability and the default agent
 * model. Loads and validates everything at registration: a bad catalog file throws, stopping the start.
 */
export function registerCatalog(worker: WorkerClient, options: CatalogOptions): void {
  const catalog = loadCatalog({ env: options.env, catalogFile: options.catalogFile });
  const providerOf = (id: string) => {
    const provider = catalog.providers.find((entry) => entry.id === id);
    if (!provider) throw notFound(`Unknown provider "${id}": GET /api/providers lists them`);
    return provider;
  };
  // AGENTOS_EMBEDDING_MODEL must name an embedding model: a wrong one stops the start, like a bad catalog.
  let serviceEmbedding: ReturnType<typeof defaultEmbeddingModel>;
  try {
    serviceEmbedding = defaultEmbeddingModel(catalog, options.env);
  } catch (error) {
    throw new Error(`Invalid AGENTOS_EMBEDDING_MODEL: ${(error as Error).message}`);
  }
  // The operator's embedding model on a local provider (every realm's memories use it) names its address.
  const embeddingProvider = catalog.providerMap.get(serviceEmbedding.provider);
  if (options.env.AGENTOS_EMBEDDING_MODEL?.trim() && embeddingProvider?.local) {
    embeddingProvider.openToRealms ??= true;
  }
  const availability = createAvailability({
    env: options.env,
    fetch: options.fetch ?? fetch,
    readSecret: (key) => vaultSecret(worker.trigger.bind(worker), key),
  });

  worker.registerFunction(
    {
      id: "catalog::models",
      description:
        "Catalog models, optionally of one tier and/or provider: {models, nextCursor} (the route: a bare array)",
      input: modelsInput,
      output: modelPage,
    },
    ({ limit, cursor, ...filter }) => {
      // The catalog's own order: the position is each model's index in it.
      const models = listModels(catalog, filter).map((model, index) => ({
        model,
        at: String(index).padStart(6, "0"),
      }));
      const page = pageOf(models, (entry) => entry.at, { limit, cursor });
      return { models: page.items.map((entry) => entry.model), nextCursor: page.nextCursor };
    },
  );

  worker.registerFunction(
    {
      id: "catalog::resolve",
      description: "The full entry for a catalog id, an alias, or <local provider>/<model>",
      input: resolveInput,
      output: modelView,
    },
    ({ model }) => resolveModel(catalog, model),
  );

  worker.registerFunction(
    {
      id: "catalog::aliases",
      description: "The alias table: {aliases: {alias: id}}",
      input: emptyInput,
      output: aliasesAnswer,
    },
    () => ({ aliases: aliasTable(catalog) }),
  );

  worker.registerFunction(
    {
      id: "catalog::providers",
      description: "Providers with availability: a configured key (hosted) or a reachable endpoint (local)",
      input: emptyInput,
      output: providersAnswer,
    },
    async () => ({
      providers: await Promise.all(catalog.providers.map((provider) => availability.status(provider))),
    }),
  );

  // What a model call needs, in one call: the entry and its provider's configuration.
  worker.registerFunction(
    {
      id: "catalog::choice",
      description: "A model's entry and its provider's configuration: {model, provider}",
      input: resolveInput,
      output: choiceAnswer,
    },
    ({ model }) => {
      const entry = resolveModel(catalog, model);
      return { model: entry, provider: providerOf(entry.provider) };
    },
  );

  worker.registerFunction(
    {
      id: "catalog::resolve_embedding",
      description:
        "An embedding model's entry and its provider's configuration: {model, provider}; the service default (AGENTOS_EMBEDDING_MODEL, else the catalog's) without a model",
      input: resolveEmbeddingInput,
      output: embeddingChoiceAnswer,
    },
    ({ model }) => {
      const entry =
        model === undefined
          ? defaultEmbeddingModel(catalog, options.env)
          : resolveEmbeddingModel(catalog, model);
      return { model: entry, provider: providerOf(entry.provider) };
    },
  );

  worker.registerFunction(
    {
      id: "catalog::embedding_models",
      description:
        "Catalog embedding models, optionally of one provider: {models, nextCursor} (the route: a bare array)",
      input: embeddingModelsInput,
      output: embeddingModelPage,
    },
    ({ limit, cursor, ...filter }) => {
      const models = listEmbeddingModels(catalog, filter).map((model, index) => ({
        model,
        at: String(index).padStart(6, "0"),
      }));
      const page = pageOf(models, (entry) => entry.at, { limit, cursor });
      return { models: page.items.map((entry) => entry.model), nextCursor: page.nextCursor };
    },
  );

  worker.registerFunction(
    {
      id: "catalog::provider",
      description:
        "One provider's configuration {id, name, baseUrl, envKey, local, driver} (no availability probe)",
      input: providerInput,
      output: providerView,
    },
    ({ id }) => providerOf(id),
  );

  worker.registerFunction(
    {
      id: "catalog::default_model",
      description:
        "The default agent model: the catalog's default if its provider is usable, else the best usable one",
      input: emptyInput,
      output: modelView,
    },
    () =>
      bestUsableModel(catalog, async (providerId) => {
        const provider = catalog.providerMap.get(providerId);
        if (!provider) return false;
        return provider.local
          ? (await availability.status(provider)).available
          : availability.keyConfigured(provider);
      }),
  );

  worker.registerFunction(
    {
      id: "catalog::provider_configured",
      description:
        "May agents (of a realm) use this provider: {configured, reason?} (hosted: a key is set; local: not probed, open to other realms once its base URL is set)",
      input: providerConfiguredInput,
      output: providerConfigured,
    },
    ({ id, realmId }) => {
      const provider = catalog.providerMap.get(id);
      if (!provider) throw notFound(`Unknown provider "${id}": GET /api/providers lists them`);
      const closed = realmId === undefined ? undefined : localProviderClosed(provider, realmId);
      return closed ? { configured: false, reason: closed } : availability.configured(provider);
    },
  );

  worker.registerFunction(
    {
      id: "catalog::test_provider",
      description: "A one-token request through a provider: {provider, ok, latencyMs, model, error?}",
      input: providerTestInput,
      output: providerTestResult,
    },
    ({ provider }, ctx) => {
      // A paid request on the operator's provider key, charged to nobody: the operator's to make.
      requireAdmin(ctx);
      return testProvider(catalog, provider, { env: options.env, trigger: (call) => worker.trigger(call) });
    },
  );
  worker.registerTrigger({
    type: "http",
    function_id: "catalog::test_provider",
    config: { api_path: "/api/providers/:provider/test", http_method: "POST" },
  });

  worker.registerRoute("catalog::models", "GET", "/api/models", { array_list: "models" });
  worker.registerRoute("catalog::aliases", "GET", "/api/models/aliases");
  worker.registerRoute("catalog::embedding_models", "GET", "/api/models/embeddings", {
    array_list: "models",
  });
  worker.registerRoute("catalog::providers", "GET", "/api/providers");
}
