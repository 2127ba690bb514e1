import { basename, extname } from "node:path";
import { z } from "zod";
import { call } from "../../../engine/call.ts";
import { costEvent, payerOf, recordCost } from "../../../llm/cost-event.ts";
import { assertMaySpend } from "../../../llm/guards.ts";
import { AppError, badRequest } from "../../../shared/errors.ts";
import { guardedRequest } from "../../../shared/net/guarded-request.ts";
import { agentIdField, pathField } from "../fields.ts";
import { existingInside, resolveInside, shown } from "../sandbox.ts";
import { defineTool, type ToolContext } from "../tool.ts";
import { readInside, writeInside } from "../workspace-fs.ts";
import { type SpeechCharge, type SpeechProvider, speak, speechProvider, transcribe } from "./speech.ts";

const MAX_MEDIA_BYTES = 25 * 1024 * 1024;
const TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".m4a": "audio/mp4",
  ".ogg": "audio/ogg",
  ".webm": "audio/webm",
};

/** Bytes of a workspace file or a URL (under the SSRF rule), with their media type and a file name. */
async function media(ctx: ToolContext, agentId: string, source: { path?: string; url?: string }) {
  if (source.path !== undefined) {
    const root = await ctx.workspace(agentId);
    const full = await existingInside(root, source.path);
    const bytes = await readInside(root, full, MAX_MEDIA_BYTES);
    return {
      bytes,
      type: TYPES[extname(full).toLowerCase()] ?? "application/octet-stream",
      name: basename(full),
    };
  }
  if (source.url === undefined) throw badRequest("give path or url");
  const response = await guardedRequest(source.url, {
    maxBytes: MAX_MEDIA_BYTES,
    timeoutMs: 60_000,
    policy: ctx.policy,
    signal: ctx.call.signal,
  });
  if (response.status < 200 || response.status > 299)
    throw new AppError("unprocessable", `${source.url} answered ${response.status}`);
  if (response.truncated) throw badRequest(`${source.url} is larger than ${MAX_MEDIA_BYTES} bytes`);
  const name = basename(new URL(response.url).pathname) || "media";
  const type =
    String(response.headers["content-type"] ?? "").split(";")[0] ||
    TYPES[extname(name).toLowerCase()] ||
    "application/octet-stream";
  return { bytes: response.body, type, name };
}

async function ask(ctx: ToolContext, agentId: string, system: string, content: unknown): Promise<string> {
  const answer = await call(ctx.trigger, "agent::complete", {
    agentId,
    withTools: false,
    system,
    messages: [{ role: "user", content }],
  });
  return answer.content;
}

/**
 * A speech provider's call for the agent, paid as its model calls are: refused before it is made when
 * the agent's realm is paused, archived or being deleted (409) or its budget (a sub-agent's root's) is
 * spent (402), and its cost charged to the agent (a sub-agent's root) on the ledger after (a tool
 * steered by what the model read could otherwise spend the operator's key past every budget).
 */
async function paidSpeech<T extends { charge: SpeechCharge }>(
  ctx: ToolContext,
  agentId: string,
  provider: SpeechProvider,
  work: () => Promise<T>,
): Promise<T> {
  // A sub-agent pays from its tree's root, as its turns do: its own account has no budget to spend.
  const account = payerOf(await ctx.agent(agentId));
  await assertMaySpend(ctx.trigger, account);
  const done = await work();
  const { usage, cost } = done.charge;
  const priced = { model: provider.model, provider: { id: provider.id } };
  await recordCost(ctx.trigger, costEvent(account, null, priced, usage, cost));
  return done;
}

const source = {
  path: pathField("Media file").optional(),
  url: z.string().min(1).max(8192).optional().describe("http(s) URL of the media"),
};
const oneSource = (input: { path?: string; url?: string }) =>
  (input.path === undefined) !== (input.url === undefined);

const imageAnalyze = defineTool({
  id: "tool::image_analyze",
  actsFor: "agent",
  description:
    "Look at an image (a workspace file or a URL) with your own model, which must support images, and answer question: {answer}.",
  input: z
    .strictObject({
      agentId: agentIdField,
      ...source,
      question: z.string().max(4000).default("Describe this image."),
    })
    .refine(oneSource, "give either path or url"),
  async run({ agentId, path, url, question }, ctx) {
    const image = await media(ctx, agentId, { path, url });
    if (!image.type.startsWith("image/")) throw badRequest(`That is ${image.type}, not an image`);
    const answer = await ask(ctx, agentId, "You describe images accurately.", [
      { type: "text", text: question },
      { type: "image", image: image.bytes.toString("base64"), mediaType: image.type },
    ]);
    return { answer };
  },
});

const imageGeneratePrompt = defineTool({
  id: "tool::image_generate_prompt",
  actsFor: "agent",
  description:
    "Turn a description into a detailed prompt for an image generator (with your own model): {prompt}.",
  input: z.strictObject({
    agentId: agentIdField,
    description: z.string().min(1).max(4000),
    style: z.string().max(200).optional(),
  }),
  async run({ agentId, description, style }, ctx) {
    const prompt = await ask(
      ctx,
      agentId,
      "You write prompts for image generators: one paragraph naming subject, composition, lighting, style and medium. Answer with the prompt only.",
      `${description}${style ? `\nStyle: ${style}` : ""}`,
    );
    return { prompt: prompt.trim() };
  },
});

const audioTranscribe = defineTool({
  id: "tool::audio_transcribe",
  actsFor: "agent",
  description:
    "Transcribe speech (a workspace audio file or a URL) with a speech provider (OpenAI, else Groq): {text, provider}.",
  input: z.strictObject({ agentId: agentIdField, ...source }).refine(oneSource, "give either path or url"),
  async run({ agentId, path, url }, ctx) {
    const provider = await speechProvider("transcribe", ctx.env, ctx.trigger);
    const { text } = await paidSpeech(ctx, agentId, provider, async () => {
      const audio = await media(ctx, agentId, { path, url });
      return transcribe(provider, audio.bytes, audio.name, ctx.call.signal);
    });
    return { text, provider: provider.id, model: provider.model.id };
  },
});

const ttsSpeak = defineTool({
  id: "tool::tts_speak",
  actsFor: "agent",
  description:
    "Speak text with a speech provider (OpenAI) into an audio file of your workspace: {path, bytes, provider}.",
  input: z.strictObject({
    agentId: agentIdField,
    text: z.string().min(1).max(4096),
    voice: z.string().min(1).max(50).default("alloy"),
    format: z.enum(["mp3", "wav", "opus", "aac", "flac"]).default("mp3"),
    path: pathField("Where to save the audio").optional(),
  }),
  risky: true,
  async run({ agentId, text, voice, format, path }, ctx) {
    const provider = await speechProvider("speak", ctx.env, ctx.trigger);
    const root = await ctx.workspace(agentId);
    const full = await resolveInside(root, path ?? `speech-${Date.now()}.${format}`);
    // Under the workspace's quota as every other write: a full workspace is refused before paying.
    await ctx.sandbox.checkRoom(root, 0);
    const { audio } = await paidSpeech(ctx, agentId, provider, () =>
      speak(provider, text, voice, format, ctx.call.signal),
    );
    await ctx.sandbox.checkRoom(root, audio.length);
    await writeInside(root, full, audio);
    return { path: shown(root, full), bytes: audio.length, provider: provider.id, model: provider.model.id };
  },
});

export const mediaTools = [imageAnalyze, imageGeneratePrompt, audioTranscribe, ttsSpeak];
