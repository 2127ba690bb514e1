import { z } from "zod";
import { nextCursor } from "../../shared/outputs.ts";
import { pageFields } from "../../shared/pagination.ts";

export const TIERS = ["frontier", "smart", "balanced", "fast", "local"] as const;
export const tierSchema = z.enum(TIERS);
export type Tier = z.infer<typeof tierSchema>;

export const DRIVERS = ["anthropic", "openai", "google", "openai_compat"] as const;

const name = (what: string, max: number) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(max, `${what} must be at most ${max} characters`)
    .regex(/^[^\s\p{Cc}]+$/u, `${what} must not contain whitespace or control characters`);

const label = z.string().min(1, "must not be empty").max(200, "must be at most 200 characters");
const tokens = z.number().int().positive();
const price = z.number().finite().nonnegative();

/** One catalog entry; exactly these fields. Prices are USD per million tokens. */
export const modelEntrySchema = z.strictObject({
  id: name("id", 256),
  provider: name("provider", 64),
  name: label,
  tier: tierSchema,
  contextWindow: tokens,
  maxOutput: tokens,
  inputPrice: price,
  outputPrice: price,
  supportsTools: z.boolean(),
  supportsVision: z.boolean(),
  local: z.boolean(),
});
export type ModelEntry = z.infer<typeof modelEntrySchema>;

/**
 * One embedding model; exactly these fields. A list of its own, so a chat model is never resolved where
 * an embedding model is wanted, nor the other way round. The price is USD per million input tokens (an
 * embedding has no output tokens).
 */
export const embeddingModelSchema = z.strictObject({
  id: name("id", 256),
  provider: name("provider", 64),
  name: label,
  /** The length of the vectors it answers by default. */
  dimensions: tokens,
  /** Tokens one input may have. */
  maxInput: tokens,
  /** Inputs one request may carry (OpenAI 2048, Gemini 100). */
  maxBatch: tokens,
  inputPrice: price,
  local: z.boolean(),
});
export type EmbeddingModelEntry = z.infer<typeof embeddingModelSchema>;

export const providerEntrySchema = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "id must be lower-case letters, digits, '_' or '-' (at most 64)"),
  name: label,
  baseUrl: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
  /** Hosted: the API key variable. Local: the base-URL variable (they need no key). */
  envKey: z.string().regex(/^[A-Z][A-Z0-9_]*$/, "envKey must be an upper-case environment variable name"),
  local: z.boolean(),
  driver: z.enum(DRIVERS),
  /**
   * A local provider: may agents and keys of realms other than the default use it. The catalog sets it
   * where the operator named the provider's address (`<ID>_BASE_URL`, or the provider in a catalog file).
   */
  openToRealms: z.boolean().optional(),
});
export type ProviderEntry = z.infer<typeof providerEntrySchema>;

const aliasName = name("alias", 128);
const aliasesSchema = z.record(aliasName, name("alias target", 256));

/** The shape of catalog.json. */
export const catalogDataSchema = z.strictObject({
  models: z.array(modelEntrySchema),
  aliases: aliasesSchema,
  embeddingModels: z.array(embeddingModelSchema),
  embeddingAliases: aliasesSchema,
  providers: z.array(providerEntrySchema),
  defaults: z.strictObject({
    smart: name("defaults.smart", 256),
    embedding: name("defaults.embedding", 256),
  }),
});
export type CatalogData = z.infer<typeof catalogDataSchema>;

/**
 * The user's file (AGENTOS_CATALOG_FILE). Models and providers are matched by id: a known id takes
 * only the fields given (a changed price), a new id needs every field.
 */
export const catalogOverrideSchema = z.strictObject({
  models: z.array(modelEntrySchema.partial().required({ id: true })).optional(),
  aliases: aliasesSchema.optional(),
  embeddingModels: z.array(embeddingModelSchema.partial().required({ id: true })).optional(),
  embeddingAliases: aliasesSchema.optional(),
  providers: z.array(providerEntrySchema.partial().required({ id: true })).optional(),
  defaults: z
    .strictObject({
      smart: name("defaults.smart", 256).optional(),
      embedding: name("defaults.embedding", 256).optional(),
    })
    .optional(),
});
export type CatalogOverride = z.infer<typeof catalogOverrideSchema>;

// Function inputs

export const modelsInput = z.strictObject({
  tier: tierSchema.optional(),
  provider: z.string().min(1).max(64).optional(),
  ...pageFields,
});

export const resolveInput = z.strictObject({
  model: z.string().min(1, "model must not be empty").max(512, "model must be at most 512 characters"),
});

export const resolveEmbeddingInput = z.strictObject({
  model: resolveInput.shape.model
    .optional()
    .describe("An embedding model's id, alias or <provider>/<model>; the service default when left out"),
});

export const embeddingModelsInput = z.strictObject({
  provider: z.string().min(1).max(64).optional(),
  ...pageFields,
});

export const emptyInput = z.strictObject({});

export const providerInput = z.strictObject({ id: z.string().min(1).max(64) });

export const providerConfiguredInput = providerInput.extend({
  realmId: z.string().min(1).max(128).optional().describe("The realm whose agent would use it"),
});

export const providerTestInput = z.strictObject({ provider: z.string().min(1).max(64) });

/** What the catalog's functions and routes answer. */
export const modelView = z.object(modelEntrySchema.shape);
export const providerView = z.object(providerEntrySchema.shape);
/** What a model call needs, in one answer: the model's entry and its provider's configuration. */
export const choiceAnswer = z.object({ model: modelView, provider: providerView });
export const embeddingModelView = z.object({
  ...embeddingModelSchema.shape,
  dimensions: embeddingModelSchema.shape.dimensions
    .optional()
    .describe("Unknown for an unlisted <provider>/<model>: the first answer tells"),
});
export type EmbeddingModelView = z.infer<typeof embeddingModelView>;
/** What an embedding call needs: the embedding model's entry and its provider's configuration. */
export const embeddingChoiceAnswer = z.object({ model: embeddingModelView, provider: providerView });
export const embeddingModelPage = z.object({
  models: z.array(z.object(embeddingModelSchema.shape)),
  nextCursor,
});
export const providerConfigured = z.object({
  configured: z.boolean(),
  reason: z.string().optional().describe("Why not: the key to set"),
});
export const modelPage = z.object({ models: z.array(modelView), nextCursor });
export const aliasesAnswer = z.object({ aliases: z.record(z.string(), z.string()) });
export const providerStatus = z.object({
  id: z.string(),
  name: z.string(),
  baseUrl: z.string(),
  local: z.boolean(),
  driver: z.enum(DRIVERS),
  available: z.boolean().describe("Hosted: a key is configured; local: the endpoint answered"),
  reason: z.string().optional(),
  openToRealms: z
    .boolean()
    .optional()
    .describe("Local: whether realms other than the default may use it (its address set by the operator)"),
});
export type ProviderStatus = z.infer<typeof providerStatus>;
export const providersAnswer = z.object({ providers: z.array(providerStatus) });
export const providerTestResult = z.object({
  provider: z.string(),
  ok: z.boolean(),
  latencyMs: z.number(),
  model: z.string(),
  error: z.string().optional(),
});
export type ProviderTestResult = z.infer<typeof providerTestResult>;
