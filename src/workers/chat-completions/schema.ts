import { z } from "zod";

const text = z.string().max(1_000_000);
const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

/** OpenAI chat messages as clients send them; unknown fields are ignored, as OpenAI does. */
export const openAiMessage = z.discriminatedUnion("role", [
  z.looseObject({ role: z.enum(["system", "developer"]), content: z.union([text, z.array(contentPart)]) }),
  z.looseObject({ role: z.literal("user"), content: z.union([text, z.array(contentPart)]) }),
  z.looseObject({
    role: z.literal("assistant"),
    content: z.union([text, z.array(contentPart), z.null()]).optional(),
    tool_calls: z
      .array(
        z.looseObject({
          id: z.string(),
          type: z.literal("function").optional(),
          function: z.looseObject({ name: z.string(), arguments: z.string() }),
        }),
      )
      .optional(),
  }),
  z.looseObject({
    role: z.literal("tool"),
    tool_call_id: z.string(),
    content: z.union([text, z.array(contentPart)]),
  }),
]);
export type OpenAiMessage = z.infer<typeof openAiMessage>;

export const chatCompletionRequest = z.looseObject({
  model: z.string().min(1, "model is required").max(256),
  messages: z.array(openAiMessage).min(1, "messages must not be empty").max(1000),
  stream: z.boolean().optional(),
  /** For an agent: false keeps the conversation out of the agent's sessions (kept by default). */
  store: z.boolean().optional().nullable(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).optional().nullable(),
  temperature: z.number().min(0).max(2).optional().nullable(),
  max_tokens: z.number().int().min(1).optional().nullable(),
  max_completion_tokens: z.number().int().min(1).optional().nullable(),
  tools: z
    .array(
      z.looseObject({
        type: z.literal("function"),
        function: z.looseObject({
          name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "tool names are 1–64 letters, digits, _ or -"),
          description: z.string().optional(),
          parameters: z.record(z.string(), z.unknown()).optional(),
        }),
      }),
    )
    .max(128)
    .optional(),
  tool_choice: z.unknown().optional(),
  n: z.literal(1, "only n=1 is supported").optional().nullable(),
  // Passed through to the provider, whose bill for these is above the catalog's prices the caller is
  // charged at: a priority tier, web searches, audio. Refused rather than given at a loss.
  service_tier: z
    .enum(
      ["auto", "default", "flex"],
      "service_tier may be auto, default or flex (others are billed above the catalog's prices)",
    )
    .optional()
    .nullable(),
  web_search_options: z
    .undefined("web_search_options is not supported (searches are billed apart from tokens)")
    .optional(),
  modalities: z
    .array(z.literal("text", "modalities may only be text (audio is billed apart from text tokens)"))
    .optional()
    .nullable(),
  audio: z.undefined("audio output is not supported (it is billed apart from text tokens)").optional(),
});
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;

/** The answer's token limit: `max_completion_tokens`, else the older `max_tokens`. */
export const maxTokensOf = (request: ChatCompletionRequest) =>
  request.max_completion_tokens ?? request.max_tokens ?? undefined;

const usage = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
});
const toolCall = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** A non-streamed answer (documentation of the route; a stream sends `chat.completion.chunk` events). */
export const chatCompletionResponse = z.object({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number(),
      message: z.object({
        role: z.literal("assistant"),
        content: z.string().nullable(),
        tool_calls: z.array(toolCall).optional(),
      }),
      finish_reason: z.enum(["stop", "length", "tool_calls"]),
    }),
  ),
  usage,
});

const openAiModel = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.number(),
  owned_by: z.string(),
});
export const modelResponse = openAiModel;
export const modelListResponse = z.object({ object: z.literal("list"), data: z.array(openAiModel) });
