/** A catalog entry as the LLM layer needs it (the catalog worker owns the full record). */
export interface ModelEntry {
  id: string;
  provider: string;
  name?: string;
  contextWindow: number;
  maxOutput: number;
  inputPrice: number;
  outputPrice: number;
  supportsTools: boolean;
  local?: boolean;
}

/** A provider as the catalog describes it; `driver` picks the AI SDK provider package. */
export interface ProviderEntry {
  id: string;
  name?: string;
  baseUrl: string;
  envKey?: string;
  local?: boolean;
  driver: "anthropic" | "openai" | "google" | "openai_compat";
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** USD for one call: usage × the catalog's per-million prices. */
export function costOf(model: Pick<ModelEntry, "inputPrice" | "outputPrice">, usage: Usage): number {
  return (usage.inputTokens * model.inputPrice + usage.outputTokens * model.outputPrice) / 1_000_000;
}
