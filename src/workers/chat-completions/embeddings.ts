import { z } from "zod";
import { call } from "../../engine/call.ts";
import type { CostAccount } from "../../llm/cost-event.ts";
import { speaksOpenAi } from "../../llm/openai/client.ts";
import { forwardCompletion } from "../../llm/passthrough.ts";
import type { ModelEntry, ProviderEntry, Usage } from "../../llm/types.ts";
import { AppError, describeZodError, isAppError } from "../../shared/errors.ts";
import { checkAccount, recordCompletionCost } from "./cost.ts";
import type { CompletionDeps } from "./deps.ts";
import { openAiError, type Reply } from "./reply.ts";

/**
 * POST /v1/embeddings, for providers that speak OpenAI's wire format: the request passes through to the
 * provider's `/embeddings` (the model id swapped for the provider's), its answer comes back unchanged,
 * and its usage is charged to the key's account like a completion's (checked first: realm open, budget).
 * OpenAI's embedding models are known by their ids with their prices; any other OpenAI-compatible
 * provider's model is named `<provider>/<model>` (its price unknown to the catalog: tokens are counted,
 * the cost is 0).
 */
const KNOWN: Record<string, { provider: string; inputPrice: number }> = {
  "text-embedding-3-small": { provider: "openai", inputPrice: 0.02 },
  "text-embedding-3-large": { provider: "openai", inputPrice: 0.13 },
  "text-embedding-ada-002": { provider: "openai", inputPrice: 0.1 },
};

const text = z.string().min(1, "input must not be empty").max(100_000);
/** The provider's answer, passed on as it came (providers may add fields of their own). */
export const embeddingsResponse = z.looseObject({
  object: z.literal("list"),
  data: z.array(
    z.looseObject({
      object: z.literal("embedding"),
      index: z.number(),
      embedding: z.union([z.array(z.number()), z.string()]).describe("Floats, or base64 when asked"),
    }),
  ),
  model: z.string(),
  usage: z.looseObject({ prompt_tokens: z.number(), total_tokens: z.number() }).optional(),
});

export const embeddingsRequest = z.looseObject({
  model: z.string().min(1, "model is required").max(256),
  input: z.union([text, z.array(text).min(1, "input must not be empty").max(2048)]),
  encoding_format: z.enum(["float", "base64"]).optional(),
  dimensions: z.number().int().min(1).max(65_536).optional(),
});

export async function createEmbeddings(
  deps: CompletionDeps,
  body: unknown,
  account: CostAccount,
): Promise<Reply> {
  const parsed = embeddingsRequest.safeParse(body);
  if (!parsed.success) return openAiError(new AppError("validation", describeZodError(parsed.error)));
  try {
    const choice = await embeddingModel(deps, parsed.data.model);
    await checkAccount(deps, account);
    const answer = await forwardCompletion({
      choice,
      body: { ...parsed.data, model: choice.model.id },
      env: deps.env,
      trigger: deps.trigger,
      path: "/embeddings",
      onUsage: (usage: Usage) => recordCompletionCost(deps, account, choice, usage),
    });
    return { status_code: 200, headers: { "content-type": "application/json; charset=utf-8" }, body: answer };
  } catch (error) {
    return openAiError(error);
  }
}

async function embeddingModel(
  deps: CompletionDeps,
  model: string,
): Promise<{ model: ModelEntry; provider: ProviderEntry }> {
  const known = KNOWN[model];
  const slash = model.indexOf("/");
  if (!known && slash <= 0) {
    throw new AppError(
      "not_found",
      `The model "${model}" is not an embedding model: use ${Object.keys(KNOWN).join(", ")}, or <provider>/<model> of an OpenAI-compatible provider`,
      { reason: "model_not_found" },
    );
  }
  const providerId = known?.provider ?? model.slice(0, slash);
  const id = known ? model : model.slice(slash + 1);
  const provider = await call(deps.trigger, "catalog::provider", { id: providerId }).catch(
    (error: unknown) => {
      if (isAppError(error) && error.status === 404) {
        throw new AppError(
          "not_found",
          `Unknown provider "${providerId}" in model "${model}": GET /api/providers lists them`,
        );
      }
      throw error;
    },
  );
  const entry: ModelEntry = {
    id,
    provider: provider.id,
    contextWindow: 8192,
    maxOutput: 0,
    inputPrice: known?.inputPrice ?? 0,
    outputPrice: 0,
    supportsTools: false,
    ...(provider.local ? { local: true } : {}),
  };
  const choice = { model: entry, provider };
  if (!speaksOpenAi(choice)) {
    throw new AppError(
      "validation",
      `Provider ${provider.id} does not offer OpenAI's /embeddings endpoint here`,
    );
  }
  return choice;
}
