import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import { encodeBase64Vector } from "../../src/llm/openai/embeddings.ts";
import type { ModelChoice } from "../../src/llm/types.ts";
import { fakeTokenCount, HASHED_DIMENSIONS, hashedEmbedding } from "./hashed-embedder.ts";
import { startTestServer, type TestServer } from "./server.ts";

/** What the fake model answers next: text, tool calls, an HTTP error, or nothing for a while. */
export type FakeReply =
  | {
      content: string;
      delayMs?: number /** Streamed, then no end and no usage: as a provider mid-answer. */;
      stall?: true;
    }
  | { toolCalls: Array<{ name: string; arguments: unknown }>; delayMs?: number }
  | { status: number; retryAfter?: string; delayMs?: number }
  | { hang: true };

/** What the fake answers the next embeddings request before (or instead of) its vectors. */
export type FakeEmbeddingReply =
  | { status: number; retryAfter?: string }
  | { delayMs: number }
  | { hang: true };

export interface FakeOpenAI {
  /** e.g. http://127.0.0.1:1234/v1 */
  baseUrl: string;
  /** Chat requests received, parsed. */
  requests: Array<Record<string, unknown>>;
  /** Queues replies; when the queue is empty the model answers "ok". */
  reply(...replies: FakeReply[]): void;
  /** Queues failures or delays for the next embeddings requests; when empty, vectors come at once. */
  embeddingReply(...replies: FakeEmbeddingReply[]): void;
  /** While down, every embeddings request is answered 503 (the provider's outage), until set false. */
  embeddingsDown(down: boolean): void;
  close(): Promise<void>;
}

export interface FakeOpenAIOptions {
  /**
   * How `/v1/embeddings` makes vectors. "legacy" (the default): `[length, first character code, 0.5]`.
   * "words": the hashed bag of words of `hashed-embedder.ts` (`dimensions` long, asked `dimensions` win),
   * deterministic and close for texts sharing words (paraphrase tests).
   */
  embeddings?: "legacy" | "words";
  dimensions?: number;
}

const USAGE = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };

/**
 * The `cost.incurred` message of one fake reply on gpt-4o ($2.50 in, $10 out per million tokens), in
 * ledger::record_cost's shape: what the ledger subscribes as is.
 */
export function fakeCostEvent(fields: { realmId: unknown; agentId: unknown; sessionId: unknown }) {
  const cost = (USAGE.prompt_tokens * 2.5 + USAGE.completion_tokens * 10) / 1e6;
  return {
    realmId: fields.realmId,
    agentId: fields.agentId,
    costCents: expect.closeTo(cost * 100, 6),
    provider: "openai",
    model: "gpt-4o",
    inputTokens: USAGE.prompt_tokens,
    outputTokens: USAGE.completion_tokens,
    eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    sessionId: fields.sessionId,
    cost: expect.closeTo(cost, 10),
    at: expect.any(String),
    // Recorded with the ledger before the answer (the service's own publishers say so).
    recorded: true,
  };
}

/** An OpenAI-compatible chat completions server on loopback, scripted by the test. */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const queue: FakeReply[] = [];
  const requests: Array<Record<string, unknown>> = [];
  const embeddingQueue: FakeEmbeddingReply[] = [];
  const embedding: EmbeddingSetup = {
    mode: options.embeddings ?? "legacy",
    dimensions: options.dimensions ?? HASHED_DIMENSIONS,
    queue: embeddingQueue,
    down: false,
  };
  const server = createServer((req, res) => {
    handle(req, res, queue, requests, embedding).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...replies) => queue.push(...replies),
    embeddingReply: (...replies) => embeddingQueue.push(...replies),
    embeddingsDown: (down) => {
      embedding.down = down;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface EmbeddingSetup {
  mode: "legacy" | "words";
  dimensions: number;
  queue: FakeEmbeddingReply[];
  down: boolean;
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  queue: FakeReply[],
  requests: Array<Record<string, unknown>>,
  embedding: EmbeddingSetup,
): Promise<void> {
  if (req.method === "GET" && req.url?.startsWith("/v1/models")) {
    send(res, 200, { object: "list", data: [{ id: "fake-model", object: "model" }] });
    return;
  }
  if (req.method === "POST" && req.url?.startsWith("/v1/audio/")) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    requests.push({ audio: req.url, contentType: req.headers["content-type"], bytes: body.length });
    // Billed as gpt-4o-mini-transcribe answers: its usage in tokens (here one audio token per 16 bytes).
    if (req.url.startsWith("/v1/audio/transcriptions")) {
      const audioTokens = Math.ceil(body.length / 16);
      send(res, 200, {
        text: `heard ${body.length} bytes`,
        usage: {
          type: "tokens",
          input_tokens: audioTokens,
          input_token_details: { text_tokens: 0, audio_tokens: audioTokens },
          output_tokens: 4,
          total_tokens: audioTokens + 4,
        },
      });
    } else {
      res.writeHead(200, { "content-type": "audio/mpeg" });
      res.end(Buffer.concat([Buffer.from("ID3"), body.subarray(0, 16)]));
    }
    return;
  }
  // Gemini's OpenAI-compatible endpoint too, for a provider whose base URL is the fake's host.
  if (
    req.method === "POST" &&
    (req.url?.startsWith("/v1/embeddings") || req.url?.startsWith("/v1beta/openai/embeddings"))
  ) {
    await answerEmbeddings(req, res, requests, embedding);
    return;
  }
  if (req.method !== "POST" || !req.url?.startsWith("/v1/chat/completions")) {
    send(res, 404, { error: { message: "not found" } });
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
  requests.push(body);
  const next = queue.shift() ?? { content: "ok" };
  if ("hang" in next) return;
  if (next.delayMs) await new Promise((resolve) => setTimeout(resolve, next.delayMs));
  if ("status" in next) {
    const headers: Record<string, string> = next.retryAfter ? { "retry-after": next.retryAfter } : {};
    send(res, next.status, { error: { message: `fake error ${next.status}`, type: "fake" } }, headers);
    return;
  }
  const model = String(body.model ?? "fake-model");
  if (body.stream === true) streamReply(res, model, next);
  else send(res, 200, completion(model, next));
}

/**
 * `/v1/embeddings`: a vector per input in OpenAI's answer (base64 when asked), the tokens counted as
 * whitespace words. Each request is recorded with the key it carried.
 */
async function answerEmbeddings(
  req: IncomingMessage,
  res: ServerResponse,
  requests: Array<Record<string, unknown>>,
  setup: EmbeddingSetup,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
    model: string;
    input: unknown;
    encoding_format?: string;
    dimensions?: number;
  };
  requests.push({ embeddings: body, authorization: req.headers.authorization, path: req.url });
  if (setup.down) {
    send(res, 503, { error: { message: "fake outage: embeddings are down", type: "fake" } });
    return;
  }
  const next = setup.queue.shift();
  if (next && "hang" in next) return;
  if (next && "delayMs" in next) await new Promise((resolve) => setTimeout(resolve, next.delayMs));
  if (next && "status" in next) {
    const headers: Record<string, string> = next.retryAfter ? { "retry-after": next.retryAfter } : {};
    send(res, next.status, { error: { message: `fake error ${next.status}`, type: "fake" } }, headers);
    return;
  }
  const inputs = (Array.isArray(body.input) ? body.input : [body.input]).map(String);
  const data = inputs.map((text, index) => {
    // Legacy: each input's length and its first character code.
    const vector =
      setup.mode === "words"
        ? hashedEmbedding(text, body.dimensions ?? setup.dimensions)
        : [text.length, text.charCodeAt(0) || 0, 0.5];
    const embedding =
      body.encoding_format === "base64" ? encodeBase64Vector(vector) : Array.from(vector, Number);
    return { object: "embedding", index, embedding };
  });
  const tokens =
    setup.mode === "words"
      ? inputs.reduce((sum, text) => sum + fakeTokenCount(text), 0)
      : inputs.reduce<number>((sum, text) => sum + text.split(/\s+/).length, 0);
  send(res, 200, {
    object: "list",
    data,
    model: body.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

function toolCallsOf(reply: FakeReply) {
  if (!("toolCalls" in reply)) return undefined;
  return reply.toolCalls.map((call, index) => ({
    id: `call_${index}_${Math.random().toString(36).slice(2, 8)}`,
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  }));
}

function completion(model: string, reply: FakeReply) {
  const toolCalls = toolCallsOf(reply);
  return {
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: "content" in reply ? reply.content : null,
          tool_calls: toolCalls,
        },
        finish_reason: toolCalls ? "tool_calls" : "stop",
      },
    ],
    usage: USAGE,
  };
}

function streamReply(res: ServerResponse, model: string, reply: FakeReply): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 0, model };
  const write = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  write({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
  const toolCalls = toolCallsOf(reply);
  if (toolCalls) {
    const delta = { tool_calls: toolCalls.map((call, index) => ({ index, ...call })) };
    write({ ...base, choices: [{ index: 0, delta, finish_reason: null }] });
  } else if ("content" in reply) {
    for (const piece of reply.content.match(/.{1,4}/gs) ?? []) {
      write({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
    }
    if ("stall" in reply && reply.stall) return;
  }
  write({ ...base, choices: [{ index: 0, delta: {}, finish_reason: toolCalls ? "tool_calls" : "stop" }] });
  write({ ...base, choices: [], usage: USAGE });
  res.end("data: [DONE]\n\n");
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/**
 * For every test of the file: a fake model and a real server whose OpenAI provider points at it
 * (`OPENAI_API_KEY` set, `OPENAI_BASE_URL` the fake). `extraEnv` adds variables (e.g. private network).
 * `shared`: one fake and one server for the whole file (tests that keep to their own realms and agents).
 */
export function serverWithFakeModel(
  extraEnv: Record<string, string> = {},
  options: { shared?: boolean } = {},
): {
  readonly fake: FakeOpenAI;
  readonly server: TestServer;
} {
  let fake: FakeOpenAI | undefined;
  let server: TestServer | undefined;
  (options.shared ? beforeAll : beforeEach)(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl, ...extraEnv },
    });
  });
  (options.shared ? afterAll : afterEach)(async () => {
    await server?.close();
    await fake?.close();
  });
  return {
    get fake() {
      if (!fake) throw new Error("serverWithFakeModel: no fake model outside a test");
      return fake;
    },
    get server() {
      if (!server) throw new Error("serverWithFakeModel: no server outside a test");
      return server;
    },
  };
}

/** A catalog choice of a model on the fake provider `fakeai` (openai-compatible), for the LLM layer's tests. */
export function fakeModelChoice(
  baseUrl: string,
  overrides: Partial<ModelChoice["provider"]> = {},
): ModelChoice {
  return {
    model: {
      id: "fake-model",
      provider: "fakeai",
      contextWindow: 8000,
      maxOutput: 1000,
      inputPrice: 1,
      outputPrice: 2,
      supportsTools: true,
    },
    provider: { id: "fakeai", baseUrl, envKey: "FAKEAI_API_KEY", driver: "openai_compat", ...overrides },
  };
}
