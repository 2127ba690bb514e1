import type { ProviderEntry } from "../types.ts";

/**
 * Where a provider takes OpenAI's embeddings requests. OpenAI and the OpenAI-compatible providers (the
 * local ones too: Ollama, vLLM, LM Studio) at `<base URL>/embeddings`; Gemini at its OpenAI-compatible
 * endpoint, `<host>/v1beta/openai/embeddings`. Anthropic has no embeddings.
 */
export function offersEmbeddings(provider: Pick<ProviderEntry, "driver">): boolean {
  return provider.driver !== "anthropic";
}

/** The path under the provider's (possibly overridden) base URL. */
export function embeddingsPath(provider: Pick<ProviderEntry, "driver">, baseUrl: string): string {
  if (provider.driver !== "google") return "/embeddings";
  // The catalog lists Google's host; a base URL may also name the API root or the compatible one.
  if (/\/v1beta\/openai\/?$/.test(baseUrl)) return "/embeddings";
  if (/\/v1beta\/?$/.test(baseUrl)) return "/openai/embeddings";
  return "/v1beta/openai/embeddings";
}
