import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TriggerRequest } from "../../../src/engine/types.ts";
import { embed } from "../../../src/llm/embeddings/embed.ts";
import type { EmbeddingChoice } from "../../../src/llm/embeddings/types.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { fakeTokenCount, hashedEmbedding } from "../../helpers/hashed-embedder.ts";

/**
 * `embed` against a fake OpenAI-compatible server (hashed bag-of-words vectors) and a stand-in for the
 * service's functions: the realm, the ledger's check and record, the vault.
 */
let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI({ embeddings: "words", dimensions: 32 });
});
afterEach(async () => {
  await fake.close();
});

const account = { realmId: "realm-1", agentId: "agent-1" };

function choiceFor(baseUrl: string, model: Partial<EmbeddingChoice["model"]> = {}): EmbeddingChoice {
  return {
    model: {
      id: "fake-embedding",
      provider: "fakeai",
      dimensions: 32,
      maxInput: 8192,
      maxBatch: 2048,
      inputPrice: 0.02,
      ...model,
    },
    provider: { id: "fakeai", baseUrl, envKey: "FAKEAI_API_KEY", driver: "openai_compat" },
  };
}

/** The service's functions as embed reaches them, each call kept. */
function service(options: { refuse?: boolean; paused?: boolean; vaultKey?: string } = {}) {
  const calls: TriggerRequest[] = [];
  const trigger = async (request: TriggerRequest): Promise<unknown> => {
    calls.push(request);
    switch (request.function_id) {
      case "realm::get":
        return { id: account.realmId, name: "r", owner: "o", status: options.paused ? "Paused" : "Active" };
      case "ledger::check":
        return options.refuse
          ? { allowed: false, spentCents: 5, limitCents: 1, scope: "realm", reason: "over" }
          : { allowed: true, spentCents: 0, limitCents: 100, scope: "realm" };
      case "ledger::record_cost":
        return { recorded: true };
      case "vault::get":
        return options.vaultKey ? { key: "provider:fakeai:api_key", value: options.vaultKey } : null;
      default:
        return undefined;
    }
  };
  const costs = () =>
    calls.filter((call) => call.function_id === "ledger::record_cost").map((call) => call.payload);
  return { trigger, calls, costs };
}

const env = { FAKEAI_API_KEY: "sk-env" };
const embeddingRequests = () =>
  fake.requests.filter((request) => "embeddings" in request) as Array<{
    embeddings: { input: string[]; model: string; encoding_format: string };
    authorization?: string;
  }>;

describe("embed", () => {
  it("answers a vector per text, in order across batches, and charges the tokens once", async () => {
    const { trigger, costs } = service();
    const texts = Array.from({ length: 11 }, (_, index) => `note number ${index} about topic ${index % 3}`);
    const result = await embed({
      choice: choiceFor(fake.baseUrl, { maxBatch: 4 }),
      texts,
      trigger,
      env,
      account,
    });
    expect(embeddingRequests().map((request) => request.embeddings.input.length)).toEqual([4, 4, 3]);
    expect(result.vectors).toEqual(texts.map((text) => hashedEmbedding(text, 32)));
    expect(result).toMatchObject({ model: "fake-embedding", dimensions: 32 });
    const tokens = texts.reduce((sum, text) => sum + fakeTokenCount(text), 0);
    expect(result.usage).toEqual({ inputTokens: tokens });
    expect(costs()).toEqual([
      expect.objectContaining({
        realmId: "realm-1",
        agentId: "agent-1",
        provider: "fakeai",
        model: "fake-embedding",
        inputTokens: tokens,
        outputTokens: 0,
        cost: expect.closeTo((tokens * 0.02) / 1e6, 12),
        costCents: expect.closeTo((tokens * 0.02) / 1e4, 6),
      }),
    ]);
  });

  it("keeps the order when batches run side by side and finish out of order", async () => {
    const { trigger } = service();
    fake.embeddingReply({ delayMs: 150 }, { delayMs: 10 });
    const texts = ["alpha beta", "gamma delta", "epsilon zeta", "eta theta"];
    const result = await embed({
      choice: choiceFor(fake.baseUrl, { maxBatch: 2 }),
      texts,
      trigger,
      env,
      account,
      concurrency: 2,
    });
    expect(result.vectors).toEqual(texts.map((text) => hashedEmbedding(text, 32)));
  });

  it("retries after a 429, waiting as Retry-After says", async () => {
    const { trigger, costs } = service();
    fake.embeddingReply({ status: 429, retryAfter: "1" });
    const started = Date.now();
    const result = await embed({
      choice: choiceFor(fake.baseUrl),
      texts: ["hello world"],
      trigger,
      env,
      account,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(embeddingRequests()).toHaveLength(2);
    expect(result.vectors[0]).toEqual(hashedEmbedding("hello world", 32));
    expect(costs()).toHaveLength(1);
  });

  it("makes no request at all for a realm over its budget, or a paused realm", async () => {
    const refusing = service({ refuse: true });
    await expect(
      embed({ choice: choiceFor(fake.baseUrl), texts: ["x"], trigger: refusing.trigger, env, account }),
    ).rejects.toMatchObject({ status: 402, code: "budget_exceeded" });
    const paused = service({ paused: true });
    await expect(
      embed({ choice: choiceFor(fake.baseUrl), texts: ["x"], trigger: paused.trigger, env, account }),
    ).rejects.toMatchObject({ status: 409 });
    expect(fake.requests).toEqual([]);
    expect([...refusing.costs(), ...paused.costs()]).toEqual([]);
  });

  it("sends the key from the vault when the environment has none", async () => {
    const { trigger, calls } = service({ vaultKey: "sk-from-vault" });
    await embed({ choice: choiceFor(fake.baseUrl), texts: ["x"], trigger, env: {}, account });
    expect(embeddingRequests()[0]?.authorization).toBe("Bearer sk-from-vault");
    expect(calls.some((call) => call.function_id === "vault::get")).toBe(true);
  });

  it("says which key to set when there is none, before any request", async () => {
    const { trigger } = service();
    await expect(
      embed({ choice: choiceFor(fake.baseUrl), texts: ["x"], trigger, env: {}, account }),
    ).rejects.toMatchObject({ status: 503, message: expect.stringContaining("FAKEAI_API_KEY") });
    expect(fake.requests).toEqual([]);
  });

  it("asks OpenAI for base64 and decodes it; compatible servers get floats", async () => {
    const { trigger } = service();
    const openai = choiceFor(fake.baseUrl);
    openai.provider = { ...openai.provider, id: "openai", envKey: "OPENAI_API_KEY", driver: "openai" };
    const texts = ["base64 please", "and another one"];
    const packed = await embed({ choice: openai, texts, trigger, env: { OPENAI_API_KEY: "sk" }, account });
    const plain = await embed({ choice: choiceFor(fake.baseUrl), texts, trigger, env, account });
    expect(embeddingRequests().map((request) => request.embeddings.encoding_format)).toEqual([
      "base64",
      "float",
    ]);
    expect(packed.vectors).toEqual(plain.vectors);
  });

  it("passes asked dimensions on, and refuses vectors of another length", async () => {
    const { trigger } = service();
    const short = await embed({
      choice: choiceFor(fake.baseUrl),
      texts: ["x y"],
      trigger,
      env,
      account,
      dimensions: 8,
    });
    expect(short.dimensions).toBe(8);
    // A legacy fake answers 3 numbers whatever is asked: the provider did not honour the dimensions.
    const legacy = await startFakeOpenAI();
    try {
      await expect(
        embed({ choice: choiceFor(legacy.baseUrl), texts: ["x"], trigger, env, account, dimensions: 8 }),
      ).rejects.toMatchObject({
        status: 502,
        message: expect.stringContaining("3 dimensions, not the 8 asked"),
      });
    } finally {
      await legacy.close();
    }
  });

  it("charges what was embedded when a later batch fails, and stops the rest", async () => {
    const { trigger, costs } = service();
    fake.embeddingReply({ delayMs: 0 }, { status: 400 });
    await expect(
      embed({
        choice: choiceFor(fake.baseUrl, { maxBatch: 1 }),
        texts: ["one two", "three", "four", "five"],
        trigger,
        env,
        account,
        concurrency: 1,
      }),
    ).rejects.toMatchObject({ message: expect.stringContaining("HTTP 400") });
    expect(embeddingRequests()).toHaveLength(2);
    expect(costs()).toEqual([expect.objectContaining({ inputTokens: 2 })]);
  });

  it("refuses an empty text, and answers no texts without a request or a charge", async () => {
    const { trigger, calls } = service();
    await expect(
      embed({ choice: choiceFor(fake.baseUrl), texts: ["fine", ""], trigger, env, account }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining("Text 1") });
    expect(await embed({ choice: choiceFor(fake.baseUrl), texts: [], trigger, env, account })).toEqual({
      vectors: [],
      usage: { inputTokens: 0 },
      model: "fake-embedding",
      dimensions: 0,
    });
    expect(fake.requests).toEqual([]);
    expect(calls).toEqual([]);
  });

  it("reaches Gemini's OpenAI-compatible endpoint under Google's host, with the Gemini key", async () => {
    const { trigger, costs } = service();
    const host = fake.baseUrl.replace(/\/v1$/, "");
    const gemini: EmbeddingChoice = {
      model: {
        id: "gemini-embedding-001",
        provider: "gemini",
        maxInput: 2048,
        maxBatch: 100,
        inputPrice: 0.15,
      },
      provider: { id: "gemini", baseUrl: host, envKey: "GEMINI_API_KEY", driver: "google" },
    };
    const texts = Array.from({ length: 150 }, (_, index) => `gemini text ${index}`);
    const result = await embed({ choice: gemini, texts, trigger, env: { GEMINI_API_KEY: "g-key" }, account });
    expect(result.vectors[149]).toEqual(hashedEmbedding("gemini text 149", 32));
    const sent = embeddingRequests() as Array<{
      path?: string;
      authorization?: string;
      embeddings: { input: string[] };
    }>;
    // Both batches go at once: in either order.
    const batches = sent.map((request) => [request.path, request.embeddings.input.length]);
    expect(batches.sort((a, b) => Number(b[1]) - Number(a[1]))).toEqual([
      ["/v1beta/openai/embeddings", 100],
      ["/v1beta/openai/embeddings", 50],
    ]);
    expect(sent[0]?.authorization).toBe("Bearer g-key");
    expect(costs()).toEqual([expect.objectContaining({ provider: "gemini", model: "gemini-embedding-001" })]);
  });

  it("stops when the caller gives up", async () => {
    const { trigger, costs } = service();
    fake.embeddingReply({ hang: true });
    const controller = new AbortController();
    const pending = embed({
      choice: choiceFor(fake.baseUrl),
      texts: ["x"],
      trigger,
      env,
      account,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error("caller left")), 50);
    await expect(pending).rejects.toBeDefined();
    expect(costs()).toEqual([]);
  });
});
