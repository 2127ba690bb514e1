import { z } from "zod";
import { call } from "../../engine/call.ts";
import type { CostAccount } from "../../llm/cost-event.ts";
import { embeddingsPath } from "../../llm/embeddings/endpoint.ts";
import { asModelChoice } from "../../llm/embeddings/types.ts";
import { assertMaySpend, assertProviderOpen } from "../../llm/guards.ts";
import { forwardCompletion } from "../../llm/passthrough.ts";
import { baseUrlOf } from "../../llm/providers.ts";
import type { Usage } from "../../llm/types.ts";
import { AppError, describeZodError } from "../../shared/errors.ts";
import { recordCompletionCost } from "./cost.ts";
import type { CompletionDeps } from "./deps.ts";
import { openAiError, type Reply } from "./reply.ts";

/**
 * POST /v1/embeddings, for providers that speak OpenAI's wire format (Gemini through its compatible
 * endpoint): the request passes through to the provider's `/embeddings` (the model id swapped for the
 * provider's), its answer comes back unchanged, and its usage is charged to the key's account like a
 * completion's (checked first: realm open, budget). The model is resolved by the catalog's embedding
 * models (`catalog::resolve_embedding`: an id, an alias, or `<provider>/<model>` of any provider that
 * offers embeddings, free unless listed), the one list of embedding models and their prices.
 */
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
    const choice = await call(deps.trigger, "catalog::resolve_embedding", { model: parsed.data.model });
    assertProviderOpen(choice.provider, account.realmId);
    await assertMaySpend(deps.trigger, account);
    const modelChoice = asModelChoice(choice);
    const answer = await forwardCompletion({
      choice: modelChoice,
      body: { ...parsed.data, model: choice.model.id },
      env: deps.env,
      trigger: deps.trigger,
      path: embeddingsPath(choice.provider, baseUrlOf(choice.provider, deps.env)),
      onUsage: (usage: Usage) => recordCompletionCost(deps, account, modelChoice, usage),
    });
    return { status_code: 200, headers: { "content-type": "application/json; charset=utf-8" }, body: answer };
  } catch (error) {
    return openAiError(error);
  }
}
