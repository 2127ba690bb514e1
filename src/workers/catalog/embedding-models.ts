import { offersEmbeddings } from "../../llm/embeddings/endpoint.ts";
import { AppError, notFound } from "../../shared/errors.ts";
import { type Catalog, shown } from "./catalog.ts";
import type { EmbeddingModelEntry, EmbeddingModelView, ProviderEntry } from "./schema.ts";

// Embedding models, resolved apart from chat models (catalog.ts indexes both: a name means one kind).

/**
 * An embedding model: its id, an alias (case-insensitive), its id in any case, or `<provider>/<model>`:
 * a listed embedding model of that provider, or any other model of a provider that offers OpenAI's
 * `/embeddings` (a local provider's free, a hosted one's at the dearest listed price; its dimensions are
 * learned from its first answer). A chat model is
 * never one: naming one is a 404 that lists the embedding models.
 */
export function resolveEmbeddingModel(catalog: Catalog, nameOrAlias: string): EmbeddingModelView {
  const input = nameOrAlias.trim();
  const lower = input.toLowerCase();
  const known =
    catalog.embeddingById.get(input) ??
    catalog.embeddingAliasMap.get(lower) ??
    catalog.embeddingByLowerId.get(lower);
  if (known) return { ...known };
  const slash = input.indexOf("/");
  const provider = slash > 0 ? catalog.providerMap.get(lower.slice(0, slash)) : undefined;
  if (!provider) {
    const chat = catalog.byLowerId.get(lower) ?? catalog.aliasMap.get(lower);
    throw notAnEmbeddingModel(
      catalog,
      input,
      chat ? ` is the chat model ${chat.id}, not an embedding model` : undefined,
    );
  }
  const model = input.slice(slash + 1);
  const listed = catalog.embeddingByLowerId.get(model.toLowerCase());
  if (listed?.provider === provider.id) return { ...listed };
  const chat = catalog.byLowerId.get(model.toLowerCase());
  if (chat?.provider === provider.id) {
    throw notAnEmbeddingModel(catalog, input, ` is the chat model ${chat.id}, not an embedding model`);
  }
  if (!offersEmbeddings(provider)) {
    throw new AppError(
      "validation",
      `Provider ${provider.id} does not offer OpenAI's /embeddings endpoint: use one of ${embeddingIds(catalog)}`,
    );
  }
  if (!/^[^\s\p{Cc}]{1,256}$/u.test(model)) throw notAnEmbeddingModel(catalog, input);
  return unlistedEmbeddingModel(provider, model, highestEmbeddingPrice(catalog));
}

/**
 * What an unlisted model of a hosted provider is charged, a million input tokens: the dearest listed
 * embedding model's price. Charged nothing, a realm key could spend the operator's provider key without
 * limit, past every budget, by naming a model the catalog does not list.
 */
function highestEmbeddingPrice(catalog: Catalog): number {
  return Math.max(
    0,
    ...catalog.embeddingModels.filter((entry) => !entry.local).map((entry) => entry.inputPrice),
  );
}

/**
 * A model named `<provider>/<name>` that the catalog does not list: what is assumed of it. A local
 * provider's costs nothing; a hosted provider's costs `hostedPrice`.
 */
export function unlistedEmbeddingModel(
  provider: ProviderEntry,
  model: string,
  hostedPrice: number,
): EmbeddingModelView {
  return {
    id: model,
    provider: provider.id,
    name: `${model} (${provider.name})`,
    maxInput: UNLISTED_EMBEDDING_MODEL.maxInput,
    // Gemini's OpenAI-compatible endpoint takes 100 inputs a request; a local server embeds them one
    // after another, so a smaller batch keeps each request well inside the timeout.
    maxBatch: provider.driver === "google" ? 100 : provider.local ? 128 : UNLISTED_EMBEDDING_MODEL.maxBatch,
    inputPrice: provider.local ? 0 : hostedPrice,
    local: provider.local,
  };
}

/** What is assumed of an unlisted embedding model (OpenAI's limits; its dimensions are not known). */
export const UNLISTED_EMBEDDING_MODEL = { maxInput: 8192, maxBatch: 2048 } as const;

function embeddingIds(catalog: Catalog): string {
  return catalog.embeddingModels.map((model) => model.id).join(", ");
}

function notAnEmbeddingModel(catalog: Catalog, input: string, why = " is not an embedding model"): AppError {
  return new AppError(
    "not_found",
    `"${shown(input)}"${why}: use one of ${embeddingIds(catalog)}, an alias (GET /api/models/embeddings), or <provider>/<model> of a provider that offers embeddings`,
    { reason: "model_not_found" },
  );
}

/** The service's embedding model: AGENTOS_EMBEDDING_MODEL when set, else the catalog's `defaults.embedding`. */
export function defaultEmbeddingModel(catalog: Catalog, env: NodeJS.ProcessEnv): EmbeddingModelView {
  const configured = env.AGENTOS_EMBEDDING_MODEL?.trim();
  return resolveEmbeddingModel(catalog, configured || catalog.defaults.embedding);
}

export function listEmbeddingModels(catalog: Catalog, filter: { provider?: string }): EmbeddingModelEntry[] {
  if (filter.provider !== undefined && !catalog.providerMap.has(filter.provider)) {
    throw notFound(`Unknown provider "${filter.provider}"; GET /api/providers lists them`);
  }
  return catalog.embeddingModels
    .filter((model) => filter.provider === undefined || model.provider === filter.provider)
    .map((model) => ({ ...model }));
}
