import type { Usage } from "../types.ts";
import type { OpenAiUsage } from "./api-types.ts";

/** A provider's usage block in our terms; a missing total is the sum (some compatible servers omit it). */
export function fromOpenAiUsage(usage: OpenAiUsage | null | undefined): Usage {
  const inputTokens = usage?.prompt_tokens ?? 0;
  const outputTokens = usage?.completion_tokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage?.total_tokens ?? inputTokens + outputTokens };
}

/** Our usage as OpenAI's usage block. */
export function toOpenAiUsage(usage: Usage): Required<OpenAiUsage> {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.totalTokens,
  };
}
