import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { z } from "zod";
import { call } from "../../../engine/call.ts";
import type { TriggerFn } from "../../../engine/types.ts";
import { AnswerTooLargeError, readBounded } from "../../../llm/http-client.ts";
import { apiKeyOf, baseUrlOf } from "../../../llm/providers.ts";
import { costOf, type ProviderEntry, type Usage } from "../../../llm/types.ts";
import { AppError } from "../../../shared/errors.ts";

/**
 * A speech model and how its provider bills it, in US dollars: per million tokens (input: audio or text;
 * output: text or audio), or, for Whisper on Groq, per hour of audio with a least billed length.
 */
export interface SpeechModel {
  id: string;
  inputPrice: number;
  outputPrice: number;
  perHour?: { usd: number; minSeconds: number };
}

/**
 * Providers with OpenAI's audio endpoints, in the order they are tried, their models and prices as the
 * providers publish them (openai.com/api/pricing, console.groq.com/docs/model/whisper-large-v3-turbo).
 */
const SPEECH_PROVIDERS: ReadonlyArray<{
  id: string;
  transcribe: SpeechModel;
  speak: SpeechModel | null;
}> = [
  {
    id: "openai",
    transcribe: { id: "gpt-4o-mini-transcribe", inputPrice: 1.25, outputPrice: 5 },
    speak: { id: "gpt-4o-mini-tts", inputPrice: 0.6, outputPrice: 12 },
  },
  {
    id: "groq",
    transcribe: {
      id: "whisper-large-v3-turbo",
      inputPrice: 0,
      outputPrice: 0,
      perHour: { usd: 0.04, minSeconds: 10 },
    },
    speak: null,
  },
];

export interface SpeechProvider {
  id: string;
  baseUrl: string;
  apiKey: string;
  model: SpeechModel;
}

/** What one call cost: the usage as counted (tokens; none for audio billed by the second) and US dollars. */
export interface SpeechCharge {
  usage: Usage;
  cost: number;
}

/** The first provider that can do `task` and has a key; none: an error naming what to configure. */
export async function speechProvider(
  task: "transcribe" | "speak",
  env: NodeJS.ProcessEnv,
  trigger: TriggerFn,
): Promise<SpeechProvider> {
  const candidates = SPEECH_PROVIDERS.filter((provider) => provider[task] !== null);
  for (const candidate of candidates) {
    let entry: ProviderEntry;
    try {
      entry = await call(trigger, "catalog::provider", { id: candidate.id });
    } catch {
      continue;
    }
    const apiKey = await apiKeyOf(entry, env, trigger);
    const model = candidate[task];
    if (apiKey && model) return { id: candidate.id, baseUrl: baseUrlOf(entry, env), apiKey, model };
  }
  const names = candidates.map((provider) => `${provider.id.toUpperCase()}_API_KEY`).join(" or ");
  throw new AppError(
    "unavailable",
    `No provider for ${task === "transcribe" ? "transcription" : "speech"} is configured: set ${names}`,
  );
}

/**
 * Bytes of a provider's answer read at most, a broken or hostile provider's endless answer otherwise held
 * whole in memory: speech is at most 4096 characters, about 15 MB as WAV (the largest format); a
 * transcription's JSON is its text (and Whisper's segments); of an error, 500 characters are shown.
 */
export const MAX_SPEECH_BYTES = 32 * 1024 * 1024;
export const MAX_TRANSCRIPTION_BYTES = 8 * 1024 * 1024;
const MAX_ERROR_BYTES = 64 * 1024;

/** The answer's body, or a 502 naming the provider once it passes `limit` bytes (the rest is not read). */
async function answerBody(provider: SpeechProvider, response: Response, limit: number): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  try {
    return await readBounded(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), limit);
  } catch (error) {
    if (!(error instanceof AnswerTooLargeError)) throw error;
    throw new AppError(
      "upstream",
      `${provider.id}'s answer is larger than ${limit / (1024 * 1024)} MB: not read`,
    );
  }
}

async function failure(provider: SpeechProvider, response: Response): Promise<AppError> {
  const text = await answerBody(provider, response, MAX_ERROR_BYTES).then(
    (body) => body.toString("utf8"),
    () => "(an answer too long to show)",
  );
  return new AppError("upstream", `${provider.id} answered ${response.status}: ${text.slice(0, 500)}`);
}

function json(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return null;
  }
}

/** OpenAI's transcription answer: the text, and the usage (tokens, or seconds of audio) or Whisper's duration. */
const transcription = z.object({
  text: z.string(),
  usage: z
    .union([
      z.object({
        type: z.literal("tokens"),
        input_tokens: z.number().min(0),
        output_tokens: z.number().min(0),
      }),
      z.object({ type: z.literal("duration"), seconds: z.number().min(0) }),
    ])
    .optional()
    .catch(undefined),
  duration: z.number().min(0).optional().catch(undefined),
});

export async function transcribe(
  provider: SpeechProvider,
  audio: Buffer,
  fileName: string,
  signal: AbortSignal,
): Promise<{ text: string; charge: SpeechCharge }> {
  const form = new FormData();
  form.append("model", provider.model.id);
  form.append("file", new Blob([new Uint8Array(audio)]), fileName);
  // Whisper says how long the audio was only in its verbose answer; that length is what it bills.
  if (provider.model.perHour) form.append("response_format", "verbose_json");
  const response = await fetch(`${provider.baseUrl.replace(/\/$/, "")}/audio/transcriptions`, {
    method: "POST",
    headers: { authorization: `Bearer ${provider.apiKey}` },
    body: form,
    signal,
  });
  if (!response.ok) throw await failure(provider, response);
  const answer = transcription.safeParse(json(await answerBody(provider, response, MAX_TRANSCRIPTION_BYTES)));
  if (!answer.success) {
    throw new AppError("upstream", `${provider.id} answered the transcription without its text`);
  }
  return { text: answer.data.text, charge: transcriptionCharge(provider.model, answer.data) };
}

/**
 * What a transcription cost, from the provider's own count: tokens at the model's prices (OpenAI's
 * gpt-4o models), else the audio's seconds at its hourly price, at least its least billed length. A
 * compatible server that reports neither (a local one) costs nothing.
 */
export function transcriptionCharge(
  model: SpeechModel,
  answer: z.output<typeof transcription>,
): SpeechCharge {
  const { usage } = answer;
  if (usage?.type === "tokens") {
    const counted = tokens(usage.input_tokens, usage.output_tokens);
    return { usage: counted, cost: costOf(model, counted) };
  }
  const seconds = usage?.type === "duration" ? usage.seconds : answer.duration;
  const cost = model.perHour
    ? (Math.max(seconds ?? 0, model.perHour.minSeconds) / 3600) * model.perHour.usd
    : 0;
  return { usage: tokens(0, 0), cost };
}

/**
 * OpenAI's speech answer is the audio alone, so its cost is estimated from the text: about 4 characters
 * a text token, and about 6.4 audio tokens a text token (measured against OpenAI's billing; at
 * gpt-4o-mini-tts's prices that is OpenAI's own estimate of $0.015 a minute). Charged whole tokens.
 */
export function speechCharge(model: SpeechModel, text: string): SpeechCharge {
  const input = Math.ceil(text.length / CHARACTERS_PER_TOKEN);
  const counted = tokens(input, Math.ceil(input * AUDIO_TOKENS_PER_TEXT_TOKEN));
  return { usage: counted, cost: costOf(model, counted) };
}

const CHARACTERS_PER_TOKEN = 4;
const AUDIO_TOKENS_PER_TEXT_TOKEN = 6.4;

const tokens = (inputTokens: number, outputTokens: number): Usage => ({
  inputTokens: Math.ceil(inputTokens),
  outputTokens: Math.ceil(outputTokens),
  totalTokens: Math.ceil(inputTokens) + Math.ceil(outputTokens),
});

export async function speak(
  provider: SpeechProvider,
  text: string,
  voice: string,
  format: string,
  signal: AbortSignal,
): Promise<{ audio: Buffer; charge: SpeechCharge }> {
  const response = await fetch(`${provider.baseUrl.replace(/\/$/, "")}/audio/speech`, {
    method: "POST",
    headers: { authorization: `Bearer ${provider.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model: provider.model.id, input: text, voice, response_format: format }),
    signal,
  });
  if (!response.ok) throw await failure(provider, response);
  const audio = await answerBody(provider, response, MAX_SPEECH_BYTES);
  return { audio, charge: speechCharge(provider.model, text) };
}
