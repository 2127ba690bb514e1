import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import {
  MAX_SPEECH_BYTES,
  MAX_TRANSCRIPTION_BYTES,
  type SpeechModel,
  type SpeechProvider,
  speak,
  speechCharge,
  transcribe,
  transcriptionCharge,
} from "../../../../src/workers/tools/media/speech.ts";
import { archiveRealm, call, spentBudget } from "../../../helpers/control-plane.ts";
import { toolsServer } from "../setup.ts";

const TRANSCRIBE: SpeechModel = { id: "gpt-4o-mini-transcribe", inputPrice: 1.25, outputPrice: 5 };
const SPEAK: SpeechModel = { id: "gpt-4o-mini-tts", inputPrice: 0.6, outputPrice: 12 };
const WHISPER: SpeechModel = {
  id: "whisper-large-v3-turbo",
  inputPrice: 0,
  outputPrice: 0,
  perHour: { usd: 0.04, minSeconds: 10 },
};

describe("what a speech call costs", () => {
  it("charges a transcription the tokens its provider counted, at the model's prices", () => {
    const charge = transcriptionCharge(TRANSCRIBE, {
      text: "hi",
      usage: { type: "tokens", input_tokens: 1000, output_tokens: 200 },
    });
    expect(charge.usage).toEqual({ inputTokens: 1000, outputTokens: 200, totalTokens: 1200 });
    expect(charge.cost).toBeCloseTo((1000 * 1.25 + 200 * 5) / 1e6, 12);
  });

  it("charges Whisper by the hour of audio, at least its least billed length", () => {
    expect(transcriptionCharge(WHISPER, { text: "", duration: 7200 }).cost).toBeCloseTo(0.08, 12);
    expect(transcriptionCharge(WHISPER, { text: "", duration: 3 }).cost).toBeCloseTo((10 / 3600) * 0.04, 12);
    // No length reported: the least billed length, never nothing.
    expect(transcriptionCharge(WHISPER, { text: "" }).cost).toBeCloseTo((10 / 3600) * 0.04, 12);
  });

  it("charges nothing where a compatible server reports no usage for a token-priced model", () => {
    expect(transcriptionCharge(TRANSCRIBE, { text: "local" })).toEqual({
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      cost: 0,
    });
  });

  it("estimates speech from its text: a token per 4 characters, 6.4 audio tokens a text token", () => {
    const charge = speechCharge(SPEAK, "a".repeat(400));
    expect(charge.usage).toEqual({ inputTokens: 100, outputTokens: 640, totalTokens: 740 });
    expect(charge.cost).toBeCloseTo((100 * 0.6 + 640 * 12) / 1e6, 12);
    // About OpenAI's own estimate of $0.015 a minute: a minute of speech is ~900 characters.
    expect(speechCharge(SPEAK, "a".repeat(900)).cost).toBeGreaterThan(0.015);
    expect(speechCharge(SPEAK, "a".repeat(900)).cost).toBeLessThan(0.02);
  });
});

/** A provider that answers `bytes` bytes (a megabyte at a time, no length said) opening with `head`. */
async function oversizedProvider(head: string, bytes: number) {
  let sent = 0;
  const server = createServer((request, response: ServerResponse) => {
    request.resume();
    response.writeHead(200, { "content-type": head.startsWith("{") ? "application/json" : "audio/mpeg" });
    response.on("error", () => undefined);
    const chunk = Buffer.alloc(1024 * 1024, "a");
    response.write(head);
    sent = head.length;
    const more = () => {
      while (sent < bytes - 2 && !response.destroyed) {
        const part = chunk.subarray(0, Math.min(chunk.length, bytes - sent - 2));
        sent += part.length;
        if (!response.write(part)) return void response.once("drain", more);
      }
      response.end(head.startsWith("{") ? '"}' : "aa");
    };
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const provider: SpeechProvider = {
    id: "hostile",
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    apiKey: "k",
    model: SPEAK,
  };
  return { provider, close: () => server.close() };
}

describe("a speech provider's answer", () => {
  it("is read up to a limit: a larger one is a 502 naming the provider", async () => {
    const speech = await oversizedProvider("ID3", MAX_SPEECH_BYTES + 1);
    try {
      const spoken = await speak(speech.provider, "hello", "alloy", "mp3", new AbortController().signal).then(
        () => "read whole",
        (error) => error,
      );
      expect(spoken).toMatchObject({
        status: 502,
        message: expect.stringMatching(/^hostile's answer is larger than 32 MB/),
      });
    } finally {
      speech.close();
    }
    const heard = await oversizedProvider('{"text":"', MAX_TRANSCRIPTION_BYTES + 1);
    try {
      const text = await transcribe(
        heard.provider,
        Buffer.from("audio"),
        "a.mp3",
        new AbortController().signal,
      ).then(
        () => "read whole",
        (error) => error,
      );
      expect(text).toMatchObject({
        status: 502,
        message: expect.stringMatching(/^hostile's answer is larger than 8 MB/),
      });
    } finally {
      heard.close();
    }
  });
});

describe("speech tools pay as model calls do", () => {
  const env = toolsServer();
  const summary = async (realmId: string) =>
    (await call(env.server, "GET", `/api/ledger/summary/${realmId}?groupBy=model`)).body as {
      totalCents: number;
      totalInputTokens: number;
      totalOutputTokens: number;
      breakdown: Record<string, number>;
    };
  const audioRequests = () => env.fake.requests.filter((request) => "audio" in request).length;

  it("charges the agent's realm for speaking and for transcribing", async () => {
    const { realmId } = await env.agent();
    await env.tool("tool::tts_speak", { text: "a".repeat(400), path: "a.mp3" });
    const spoken = await summary(realmId);
    expect(spoken.breakdown).toEqual({ "gpt-4o-mini-tts": ((100 * 0.6 + 640 * 12) / 1e6) * 100 });
    expect([spoken.totalInputTokens, spoken.totalOutputTokens]).toEqual([100, 640]);
    // The fake counts an audio token per 16 bytes of the upload and answers 4 text tokens.
    await env.tool("tool::audio_transcribe", { path: "a.mp3" });
    const heard = await summary(realmId);
    const audioTokens = heard.totalInputTokens - 100;
    expect(audioTokens).toBeGreaterThan(0);
    expect(heard.totalOutputTokens).toBe(644);
    expect(heard.breakdown["gpt-4o-mini-transcribe"]).toBeCloseTo(
      ((audioTokens * 1.25 + 4 * 5) / 1e6) * 100,
      6,
    );
  });

  it("refuses with 402 before calling the provider once the realm's budget is spent", async () => {
    const { realmId } = await env.agent();
    await env.tool("tool::file_write", { path: "hello.mp3", content: "ID3 not really audio" });
    await spentBudget(env.server, realmId);
    const before = audioRequests();
    expect((await env.failure("tool::tts_speak", { text: "again", path: "again.mp3" })).status).toBe(402);
    expect((await env.failure("tool::audio_transcribe", { path: "hello.mp3" })).status).toBe(402);
    expect(audioRequests()).toBe(before);
  });

  it("refuses with 409 in an archived realm, calling no provider", async () => {
    const { realmId } = await env.agent();
    await archiveRealm(env.server, realmId);
    const before = audioRequests();
    const refused = await env.failure("tool::tts_speak", { text: "hello", path: "hello.mp3" });
    expect(refused).toMatchObject({ status: 409, message: expect.stringContaining("archived") });
    expect(audioRequests()).toBe(before);
  });
});
