import { envPrefix, missingKey } from "../../llm/providers.ts";
import type { ProviderEntry, ProviderStatus } from "./schema.ts";

export const PROBE_TIMEOUT_MS = 1000;
export const PROBE_CACHE_MS = 10_000;

export interface AvailabilityOptions {
  env: NodeJS.ProcessEnv;
  fetch: typeof fetch;
  /** The vault secret's value, or undefined when missing or unreadable. */
  readSecret: (key: string) => Promise<string | undefined>;
  now?: () => number;
}

/** The vault secret holding a hosted provider's API key (`agentos config set-key <provider> <key>`). */
export const apiKeySecret = (providerId: string) => `provider:${providerId}:api_key`;

/**
 * Availability of each provider: hosted ones need a key (environment or vault), local ones must answer
 * `GET <baseUrl>/models` within a second; probe results are kept for ten seconds.
 */
export function createAvailability(options: AvailabilityOptions) {
  const now = options.now ?? Date.now;
  const probes = new Map<string, { at: number; result: Promise<string | undefined> }>();

  /** Undefined when the endpoint answers 2xx, else why not. */
  async function probe(provider: ProviderEntry): Promise<string | undefined> {
    const url = `${provider.baseUrl.replace(/\/+$/, "")}/models`;
    const key = options.env[`${envPrefix(provider.id)}_API_KEY`]?.trim();
    try {
      const response = await options.fetch(url, {
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
        headers: key ? { authorization: `Bearer ${key}` } : {},
      });
      await response.body?.cancel().catch(() => {});
      return response.ok ? undefined : `GET ${url} answered HTTP ${response.status}`;
    } catch (error) {
      const name = (error as Error)?.name;
      if (name === "TimeoutError" || name === "AbortError") {
        return `GET ${url} did not answer within ${PROBE_TIMEOUT_MS} ms`;
      }
      return `GET ${url} failed: ${describeFetchError(error)}`;
    }
  }

  function cachedProbe(provider: ProviderEntry): Promise<string | undefined> {
    const cacheKey = `${provider.id} ${provider.baseUrl}`;
    const cached = probes.get(cacheKey);
    if (cached && now() - cached.at < PROBE_CACHE_MS) return cached.result;
    const result = probe(provider);
    probes.set(cacheKey, { at: now(), result });
    return result;
  }

  async function keyConfigured(provider: ProviderEntry): Promise<boolean> {
    const variables = [provider.envKey, `${envPrefix(provider.id)}_API_KEY`];
    if (variables.some((variable) => options.env[variable]?.trim())) return true;
    return Boolean(await options.readSecret(apiKeySecret(provider.id)));
  }

  async function status(provider: ProviderEntry): Promise<ProviderStatus> {
    const { id, name, baseUrl, local, driver } = provider;
    const realms = local ? { openToRealms: provider.openToRealms === true } : {};
    const base = { id, name, baseUrl, local, driver, ...realms };
    if (local) {
      const reason = await cachedProbe(provider);
      return reason === undefined ? { ...base, available: true } : { ...base, available: false, reason };
    }
    if (await keyConfigured(provider)) return { ...base, available: true };
    return {
      ...base,
      available: false,
      reason: `no API key: set ${provider.envKey} or run \`agentos config set-key ${id} <key>\``,
    };
  }

  /**
   * Whether an agent may be created on the provider: a hosted one needs its key; a local one is not
   * probed (a server that is down now may be up when the agent is asked), so it always may.
   */
  async function configured(provider: ProviderEntry): Promise<{ configured: boolean; reason?: string }> {
    if (provider.local || (await keyConfigured(provider))) return { configured: true };
    return { configured: false, reason: missingKey(provider).message };
  }

  return { status, configured, keyConfigured };
}

/** `fetch failed` hides the reason in `cause` (ECONNREFUSED, ENOTFOUND…). */
function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } })?.cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}
