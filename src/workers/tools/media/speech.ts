import { call } from "../../../engine/call.ts";
import type { TriggerFn } from "../../../engine/types.ts";
import { apiKeyOf, baseUrlOf } from "../../../llm/providers.ts";
import type { ProviderEntry } from "../../../llm/types.ts";
import { AppError } from "../../../shared/errors.ts";

/** Providers with OpenAI's audio endpoints, in the order they are tried, and their models. */
const SPEECH_PROVIDERS = [
  { id: "openai", transcribe: "gpt-4o-mini-transcribe", speak: "gpt-4o-mini-tts" },
  { id: "groq", transcribe: "whisper-large-v3-turbo", speak: null },
] as const;

interface SpeechProvider {
  id: string;
  baseUrl: string;
  apiKey: string;
  model: string;
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
    if (apiKey)
      return { id: candidate.id, baseUrl: baseUrlOf(entry, env), apiKey, model: candidate[task] as string };
  }
  const names = candidates.map((provider) => `${provider.id.toUpperCase()}_API_KEY`).join(" or ");
  throw new AppError(
    "unavailable",
    `No provider for ${task === "transcribe" ? "transcription" : "speech"} is configured: set ${names}`,
  );
}

async function failure(provider: SpeechProvider, response: Response): Promise<AppError> {
  const text = await response.text().catch(() => "");
  return new AppError("upstream", `${provider.id} answered ${response.status}: ${text.slice(0, 500)}`);
}

export async function transcribe(
  provider: SpeechProvider,
  audio: Buffer,
  fileName: string,
  signal: AbortSignal,
): Promise<string> {
  const form = new FormData();
  form.append("model", provider.model);
  form.append("file", new Blob([new Uint8Array(audio)]), fileName);
  const response = await fetch(`${provider.baseUrl.replace(/\/$/, "")}/audio/transcriptions`, {
    method: "POST",
    headers: { authorization: `Bearer ${provider.apiKey}` },
    body: form,
    signal,
  });
  if (!response.ok) throw await failure(provider, response);
  return ((await response.json()) as { text: string }).text;
}

export async function speak(
  provider: SpeechProvider,
  text: string,
  voice: string,
  format: string,
  signal: AbortSignal,
): Promise<Buffer> {
  const response = await fetch(`${provider.baseUrl.replace(/\/$/, "")}/audio/speech`, {
    method: "POST",
    headers: { authorization: `Bearer ${provider.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model: provider.model, input: text, voice, response_format: format }),
    signal,
  });
  if (!response.ok) throw await failure(provider, response);
  return Buffer.from(await response.arrayBuffer());
}
