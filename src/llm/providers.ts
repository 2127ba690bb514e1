import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModel } from "ai";
import type { TriggerFn } from "../engine/types.ts";
import { DEFAULT_REALM_ID } from "../shared/access.ts";
import { AppError } from "../shared/errors.ts";
import { vaultSecret } from "../shared/vault-secret.ts";
import { keepAliveFetch } from "./http-client.ts";
import type { ModelEntry, ProviderEntry } from "./types.ts";

/** `OPENAI`, `LMSTUDIO`, `TOGETHER_AI`: the prefix of a provider's environment variables. */
export function envPrefix(providerId: string): string {
  return providerId.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
}

/**
 * `<PROVIDER>_<suffix>` for a provider id, built once per id: every model call looks up its provider's
 * variables, and building the name (case, pattern) cost more than reading it.
 */
function variableFor(names: Map<string, string>, providerId: string, suffix: string): string {
  let name = names.get(providerId);
  if (name === undefined) {
    name = `${envPrefix(providerId)}_${suffix}`;
    names.set(providerId, name);
  }
  return name;
}
const baseUrlVariables = new Map<string, string>();
const apiKeyVariables = new Map<string, string>();

/** The base URL: `<PROVIDER>_BASE_URL` when set, else the catalog's. */
export function baseUrlOf(provider: ProviderEntry, env: NodeJS.ProcessEnv): string {
  return env[variableFor(baseUrlVariables, provider.id, "BASE_URL")]?.trim() || provider.baseUrl;
}

/**
 * A local provider at its catalog address (a fixed port of this host) is the operator's alone: another
 * realm's keys and agents reach it once the operator names its address (the catalog's `openToRealms`), so
 * a tenant cannot make the service post to whatever listens on 127.0.0.1:8000, nor run models on the
 * operator's hardware unasked. The reason it is closed, or undefined when it is open.
 */
export function localProviderClosed(provider: ProviderEntry, realmId: string): string | undefined {
  if (!provider.local || provider.openToRealms || realmId === DEFAULT_REALM_ID) return undefined;
  return `local provider ${provider.id} serves the default realm only, until the operator names its address (${envPrefix(provider.id)}_BASE_URL, or the provider in AGENTOS_CATALOG_FILE)`;
}

/**
 * The provider's API key: `<PROVIDER>_API_KEY` (or the catalog's envKey), else the vault secret
 * `provider:<id>:api_key` (`agentos config set-key`). Local providers need none.
 */
export async function apiKeyOf(
  provider: ProviderEntry,
  env: NodeJS.ProcessEnv,
  trigger: TriggerFn,
): Promise<string | undefined> {
  // No vault, or it cannot be read: the key counts as not configured.
  return envApiKeyOf(provider, env) || vaultSecret(trigger, `provider:${provider.id}:api_key`);
}

/**
 * The key from the environment alone (apiKeyOf's first choice), without a wait: a call whose key is
 * set there (the usual case) need not await the vault's answer.
 */
export function envApiKeyOf(provider: ProviderEntry, env: NodeJS.ProcessEnv): string | undefined {
  // A local provider's envKey names its base-URL variable, not a key; an optional key is <ID>_API_KEY.
  const keyVariable = provider.local ? undefined : provider.envKey;
  return (
    env[keyVariable ?? ""]?.trim() ||
    env[variableFor(apiKeyVariables, provider.id, "API_KEY")]?.trim() ||
    undefined
  );
}

export function missingKey(provider: ProviderEntry): AppError {
  const variable = (!provider.local && provider.envKey) || `${envPrefix(provider.id)}_API_KEY`;
  return new AppError(
    "unavailable",
    `No API key for provider ${provider.id}: set ${variable} or run \`agentos config set-key ${provider.id} <key>\``,
    { reason: "provider_not_configured" },
  );
}

/** The AI SDK model for a catalog entry, talking to the provider's (possibly overridden) base URL. */
export function languageModel(
  model: ModelEntry,
  provider: ProviderEntry,
  baseURL: string,
  apiKey: string | undefined,
): LanguageModel {
  switch (provider.driver) {
    case "anthropic":
      return createAnthropic({ apiKey, baseURL: anthropicBase(baseURL), fetch: keepAliveFetch })(model.id);
    case "google":
      return createGoogleGenerativeAI({ apiKey, baseURL: googleBase(baseURL), fetch: keepAliveFetch })(
        model.id,
      );
    case "openai":
      return createOpenAI({ apiKey, baseURL, fetch: keepAliveFetch }).chat(model.id);
    default:
      return createOpenAICompatible({
        name: provider.id,
        baseURL,
        apiKey,
        includeUsage: true,
        fetch: keepAliveFetch,
      }).chatModel(model.id);
  }
}

/** The catalog lists hosts; the SDKs want their API root. */
function anthropicBase(url: string): string {
  return /\/v1\/?$/.test(url) ? url : `${url.replace(/\/$/, "")}/v1`;
}

function googleBase(url: string): string {
  return /\/v1(beta)?\/?$/.test(url) ? url : `${url.replace(/\/$/, "")}/v1beta`;
}
