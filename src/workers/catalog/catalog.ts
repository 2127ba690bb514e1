import { readFileSync } from "node:fs";
import type { z } from "zod";
import { offersEmbeddings } from "../../llm/embeddings/endpoint.ts";
import { envPrefix } from "../../llm/providers.ts";
import { type AppError, notFound } from "../../shared/errors.ts";
import {
  type CatalogData,
  type CatalogOverride,
  catalogDataSchema,
  catalogOverrideSchema,
  type EmbeddingModelEntry,
  embeddingModelSchema,
  type ModelEntry,
  modelEntrySchema,
  type ProviderEntry,
  providerEntrySchema,
  type Tier,
} from "./schema.ts";

/** The merged catalog with its lookup tables. Entries are shared: hand out copies. */
export interface Catalog extends CatalogData {
  byId: Map<string, ModelEntry>;
  byLowerId: Map<string, ModelEntry>;
  aliasMap: Map<string, ModelEntry>;
  providerMap: Map<string, ProviderEntry>;
  embeddingById: Map<string, EmbeddingModelEntry>;
  embeddingByLowerId: Map<string, EmbeddingModelEntry>;
  embeddingAliasMap: Map<string, EmbeddingModelEntry>;
}

export interface LoadCatalogOptions {
  env: NodeJS.ProcessEnv;
  /** AGENTOS_CATALOG_FILE: additions and replacements, merged by id. */
  catalogFile?: string;
}

const BUILTIN_FILE = new URL("./catalog.json", import.meta.url);

/** A model named `<local provider>/<name>` that the catalog does not list: assumed capabilities. */
export const UNLISTED_LOCAL_MODEL = { contextWindow: 8192, maxOutput: 4096, supportsTools: true } as const;

/**
 * The built-in catalog, merged with the user's file, with `<PROVIDER>_BASE_URL` applied. Throws a plain
 * Error naming the file (or variable) and the field when something is wrong, so the start stops.
 */
export function loadCatalog(options: LoadCatalogOptions): Catalog {
  let data = parseBuiltin();
  if (options.catalogFile)
    data = mergeCatalog(data, readOverrideFile(options.catalogFile), options.catalogFile);
  return indexCatalog(applyBaseUrlOverrides(data, options.env), options.catalogFile ?? "catalog.json");
}

export function parseBuiltin(): CatalogData {
  const parsed = catalogDataSchema.safeParse(JSON.parse(readFileSync(BUILTIN_FILE, "utf8")));
  if (!parsed.success) throw new Error(`Invalid built-in catalog.json: ${describe(parsed.error)}`);
  return parsed.data;
}

/** Reads and validates an override file; errors name the file and the field. */
export function readOverrideFile(file: string): CatalogOverride {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`Cannot read catalog file ${file} (AGENTOS_CATALOG_FILE): ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`Invalid catalog file ${file}: not JSON (${(error as Error).message})`);
  }
  const parsed = catalogOverrideSchema.safeParse(json);
  if (!parsed.success) throw new Error(`Invalid catalog file ${file}: ${describe(parsed.error)}`);
  return parsed.data;
}

/** Adds or replaces models and providers by id (a known id keeps the fields not given), then aliases and defaults. */
export function mergeCatalog(base: CatalogData, override: CatalogOverride, source: string): CatalogData {
  const problems: string[] = [];
  const models = mergeById(base.models, override.models ?? [], modelEntrySchema, "models", problems);
  const embeddingModels = mergeById(
    base.embeddingModels,
    override.embeddingModels ?? [],
    embeddingModelSchema,
    "embeddingModels",
    problems,
  );
  const providers = mergeById(
    base.providers,
    override.providers ?? [],
    providerEntrySchema,
    "providers",
    problems,
  );
  if (problems.length > 0) throw new Error(`Invalid catalog file ${source}: ${problems.join("; ")}`);
  // A local provider the operator's file lists is at an address the operator chose.
  const listed = new Set((override.providers ?? []).map((provider) => provider.id));
  return {
    models,
    providers: providers.map((provider) =>
      provider.local && listed.has(provider.id) && provider.openToRealms === undefined
        ? { ...provider, openToRealms: true }
        : provider,
    ),
    aliases: { ...base.aliases, ...override.aliases },
    embeddingModels,
    embeddingAliases: { ...base.embeddingAliases, ...override.embeddingAliases },
    defaults: {
      smart: override.defaults?.smart ?? base.defaults.smart,
      embedding: override.defaults?.embedding ?? base.defaults.embedding,
    },
  };
}

function mergeById<T extends { id: string }>(
  base: T[],
  patches: Array<Partial<T> & { id: string }>,
  schema: z.ZodType<T>,
  field: string,
  problems: string[],
): T[] {
  const merged = new Map(base.map((entry) => [entry.id, entry]));
  const seen = new Set<string>();
  patches.forEach((patch, index) => {
    if (seen.has(patch.id)) problems.push(`${field}.${index}.id: "${patch.id}" is listed twice`);
    seen.add(patch.id);
    const existing = merged.get(patch.id);
    const parsed = schema.safeParse(existing ? { ...existing, ...patch } : patch);
    if (parsed.success) merged.set(patch.id, parsed.data);
    else {
      const kind = { models: "model", embeddingModels: "embedding model" }[field] ?? "provider";
      const hint = existing ? "" : ` (a new ${kind} needs every field)`;
      problems.push(`${describe(parsed.error, `${field}.${index}`)}${hint}`);
    }
  });
  return [...merged.values()];
}

/** `<PROVIDER>_BASE_URL` replaces a provider's base URL (e.g. OPENAI_BASE_URL, OLLAMA_BASE_URL). */
export function applyBaseUrlOverrides(data: CatalogData, env: NodeJS.ProcessEnv): CatalogData {
  const providers = data.providers.map((provider) => {
    const variable = `${envPrefix(provider.id)}_BASE_URL`;
    const value = env[variable]?.trim();
    if (!value) return provider;
    const parsed = providerEntrySchema.shape.baseUrl.safeParse(value);
    if (!parsed.success) throw new Error(`Invalid ${variable}: "${value}" is not an http(s) URL`);
    return { ...provider, baseUrl: parsed.data, ...(provider.local ? { openToRealms: true } : {}) };
  });
  return { ...data, providers };
}

/** Checks the references between the parts and builds the lookup tables. */
export function indexCatalog(data: CatalogData, source: string): Catalog {
  const problems: string[] = [];
  const providerMap = new Map(data.providers.map((provider) => [provider.id, provider]));
  const byId = new Map<string, ModelEntry>();
  const byLowerId = new Map<string, ModelEntry>();
  for (const model of data.models) {
    if (byId.has(model.id)) problems.push(`models: id "${model.id}" is listed twice`);
    byId.set(model.id, model);
    if (!byLowerId.has(model.id.toLowerCase())) byLowerId.set(model.id.toLowerCase(), model);
    const provider = providerMap.get(model.provider);
    if (!provider) problems.push(`models.${model.id}.provider: unknown provider "${model.provider}"`);
    else if (provider.local !== model.local) {
      problems.push(`models.${model.id}.local: must be ${provider.local}, as provider "${provider.id}" is`);
    }
  }
  const aliasMap = checkedAliases(data.aliases, byId, byLowerId, problems, {
    at: "aliases",
    missing: "is not a catalog id",
    shadowing: (id) => `is the id of another model ("${id}"), which always wins`,
  });
  if (!byId.has(data.defaults.smart)) {
    problems.push(`defaults.smart: "${data.defaults.smart}" is not a catalog id`);
  }
  const embeddings = indexEmbeddings(data, providerMap, byLowerId, problems);
  if (problems.length > 0) throw new Error(`Invalid catalog file ${source}: ${problems.join("; ")}`);
  return { ...data, byId, byLowerId, aliasMap, providerMap, ...embeddings };
}

/**
 * The embedding models' tables, checked like the chat models': a known provider that offers OpenAI's
 * `/embeddings`, the provider's `local` flag, no id a chat model has too (a name means one kind of model),
 * aliases and `defaults.embedding` naming embedding ids.
 */
function indexEmbeddings(
  data: CatalogData,
  providerMap: Map<string, ProviderEntry>,
  chatByLowerId: Map<string, ModelEntry>,
  problems: string[],
) {
  const embeddingById = new Map<string, EmbeddingModelEntry>();
  const embeddingByLowerId = new Map<string, EmbeddingModelEntry>();
  for (const model of data.embeddingModels) {
    const at = `embeddingModels.${model.id}`;
    if (embeddingById.has(model.id)) problems.push(`embeddingModels: id "${model.id}" is listed twice`);
    embeddingById.set(model.id, model);
    const lower = model.id.toLowerCase();
    if (!embeddingByLowerId.has(lower)) embeddingByLowerId.set(lower, model);
    if (chatByLowerId.has(lower)) problems.push(`${at}.id: is also a chat model's id in models`);
    const provider = providerMap.get(model.provider);
    if (!provider) problems.push(`${at}.provider: unknown provider "${model.provider}"`);
    else if (!offersEmbeddings(provider)) {
      problems.push(`${at}.provider: "${provider.id}" (driver ${provider.driver}) offers no embeddings`);
    } else if (provider.local !== model.local) {
      problems.push(`${at}.local: must be ${provider.local}, as provider "${provider.id}" is`);
    }
  }
  const embeddingAliasMap = checkedAliases(
    data.embeddingAliases,
    embeddingById,
    embeddingByLowerId,
    problems,
    {
      at: "embeddingAliases",
      missing: "is not an embedding model's id",
      shadowing: (id) => `is the id of another embedding model ("${id}")`,
    },
  );
  if (!embeddingById.has(data.defaults.embedding)) {
    problems.push(`defaults.embedding: "${data.defaults.embedding}" is not an embedding model's id`);
  }
  return { embeddingById, embeddingByLowerId, embeddingAliasMap };
}

/**
 * Aliases by lower-case name, each checked: it names an id of its kind, and is no other entry's id in
 * another case (an id always wins over an alias).
 */
function checkedAliases<Entry extends { id: string }>(
  aliases: Record<string, string>,
  byId: Map<string, Entry>,
  byLowerId: Map<string, Entry>,
  problems: string[],
  words: { at: string; missing: string; shadowing: (id: string) => string },
): Map<string, Entry> {
  const table = new Map<string, Entry>();
  for (const [alias, target] of Object.entries(aliases)) {
    const entry = byId.get(target);
    const shadowed = byLowerId.get(alias.toLowerCase());
    if (!entry) problems.push(`${words.at}.${alias}: "${target}" ${words.missing}`);
    else if (shadowed && shadowed !== entry)
      problems.push(`${words.at}.${alias}: ${words.shadowing(shadowed.id)}`);
    else table.set(alias.toLowerCase(), entry);
  }
  return table;
}

/**
 * A catalog id, an alias (case-insensitive), an id in any case, or `<provider>/<model>`: a catalog id of
 * that provider, or, for a local provider, any model it serves (free, with assumed capabilities).
 */
export function resolveModel(catalog: Catalog, nameOrAlias: string): ModelEntry {
  const input = nameOrAlias.trim();
  const lower = input.toLowerCase();
  const known = catalog.byId.get(input) ?? catalog.aliasMap.get(lower) ?? catalog.byLowerId.get(lower);
  if (known) return { ...known };
  const slash = input.indexOf("/");
  const provider = slash > 0 ? catalog.providerMap.get(lower.slice(0, slash)) : undefined;
  const embedding = catalog.embeddingByLowerId.get(lower) ?? catalog.embeddingAliasMap.get(lower);
  if (embedding) throw notAChatModel(input, embedding);
  if (provider) {
    const model = input.slice(slash + 1);
    const listed = catalog.byId.get(model) ?? catalog.byLowerId.get(model.toLowerCase());
    if (listed?.provider === provider.id) return { ...listed };
    const listedEmbedding = catalog.embeddingByLowerId.get(model.toLowerCase());
    if (listedEmbedding?.provider === provider.id) throw notAChatModel(input, listedEmbedding);
    if (provider.local && /^[^\s\p{Cc}]{1,256}$/u.test(model)) return unlistedLocalModel(provider, model);
    if (!provider.local) {
      throw unknownModel(input, `; "<provider>/<model>" names unlisted models of local providers only`);
    }
  }
  throw unknownModel(input);
}

function unlistedLocalModel(provider: ProviderEntry, model: string): ModelEntry {
  return {
    id: model,
    provider: provider.id,
    name: `${model} (${provider.name})`,
    tier: "local",
    ...UNLISTED_LOCAL_MODEL,
    inputPrice: 0,
    outputPrice: 0,
    supportsVision: false,
    local: true,
  };
}

function notAChatModel(input: string, model: EmbeddingModelEntry): AppError {
  return notFound(
    `"${shown(input)}" is the embedding model ${model.id}, not a chat model; GET /api/models lists chat models`,
  );
}

/** A name as an error message quotes it: at most 200 characters. */
export function shown(input: string): string {
  return input.length > 200 ? `${input.slice(0, 200)}…` : input;
}

function unknownModel(input: string, hint = ""): AppError {
  return notFound(
    `Unknown model "${shown(input)}": not a catalog id or alias; GET /api/models lists them${hint}`,
  );
}

export function listModels(catalog: Catalog, filter: { tier?: Tier; provider?: string }): ModelEntry[] {
  if (filter.provider !== undefined && !catalog.providerMap.has(filter.provider)) {
    throw notFound(`Unknown provider "${filter.provider}"; GET /api/providers lists them`);
  }
  return catalog.models
    .filter((model) => filter.tier === undefined || model.tier === filter.tier)
    .filter((model) => filter.provider === undefined || model.provider === filter.provider)
    .map((model) => ({ ...model }));
}

export function aliasTable(catalog: Catalog): Record<string, string> {
  return Object.fromEntries([...catalog.aliasMap].map(([alias, model]) => [alias, model.id]));
}

export function defaultModel(catalog: Catalog): ModelEntry {
  return { ...(catalog.byId.get(catalog.defaults.smart) as ModelEntry) };
}

/** Tiers in the order the default agent model is looked for when the catalog's default cannot be used. */
const DEFAULT_TIER_ORDER: readonly Tier[] = ["smart", "frontier", "balanced", "fast", "local"];

/**
 * The best model an agent can use: the catalog's default when its provider is usable, else the first
 * tool-capable model of the best tier (smart, frontier, balanced, fast, local; catalog order within a
 * tier) whose provider is; the catalog's default when none is (creating an agent on it then says which
 * key to set).
 */
export async function bestUsableModel(
  catalog: Catalog,
  usable: (providerId: string) => Promise<boolean>,
): Promise<ModelEntry> {
  const preferred = defaultModel(catalog);
  const verdicts = new Map<string, Promise<boolean>>();
  const isUsable = (providerId: string) => {
    let verdict = verdicts.get(providerId);
    if (!verdict) {
      verdict = usable(providerId);
      verdicts.set(providerId, verdict);
    }
    return verdict;
  };
  if (await isUsable(preferred.provider)) return preferred;
  for (const tier of DEFAULT_TIER_ORDER) {
    for (const model of catalog.models) {
      if (model.tier === tier && model.supportsTools && (await isUsable(model.provider))) return { ...model };
    }
  }
  return preferred;
}

/** `path: message` per issue, the path prefixed (e.g. `models.0.inputPrice: expected number`). */
function describe(error: z.ZodError, prefix?: string): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => {
      const path = [...(prefix ? [prefix] : []), ...issue.path.map(String)].join(".") || "(root)";
      return `${path}: ${issue.message}`;
    })
    .join("; ");
}
