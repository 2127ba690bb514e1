import { jsonSchema, tool } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { generate, generateStream } from "../../src/llm/generate.ts";
import { costOf } from "../../src/llm/types.ts";
import { type FakeOpenAI, fakeModelChoice, startFakeOpenAI } from "../helpers/fake-openai.ts";

let fake: FakeOpenAI;
const noVault = async () => null;

const choiceFor = fakeModelChoice;

const env = () => ({ FAKEAI_API_KEY: "sk-test" });

beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

describe("generate", () => {
  it("sends the conversation to the provider and returns its answer with usage", async () => {
    fake.reply({ content: "Hello there" });
    const result = await generate({
      choices: [choiceFor(fake.baseUrl)],
      system: "Be brief",
      messages: [{ role: "user", content: "Hi" }],
      env: env(),
      trigger: noVault,
    });
    expect(result).toMatchObject({
      content: "Hello there",
      model: "fake-model",
      usage: { inputTokens: 12, outputTokens: 5 },
    });
    const sent = fake.requests[0] as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages).toEqual([
      { role: "system", content: "Be brief" },
      { role: "user", content: "Hi" },
    ]);
    expect(costOf(choiceFor("").model, result.usage)).toBeCloseTo((12 * 1 + 5 * 2) / 1e6);
  });

  it("runs tool calls and feeds their results back to the model", async () => {
    fake.reply({ toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] }, { content: "It is 5" });
    const calls: unknown[] = [];
    const result = await generate({
      choices: [choiceFor(fake.baseUrl)],
      messages: [{ role: "user", content: "2+3?" }],
      tools: {
        add: tool({
          description: "Add two numbers",
          inputSchema: jsonSchema<{ a: number; b: number }>({
            type: "object",
            properties: { a: { type: "number" }, b: { type: "number" } },
          }),
          execute: async (input) => {
            calls.push(input);
            return { sum: input.a + input.b };
          },
        }),
      },
      env: env(),
      trigger: noVault,
    });
    expect(calls).toEqual([{ a: 2, b: 3 }]);
    expect(result.content).toBe("It is 5");
    expect(result.toolCalls).toEqual([
      { toolCallId: expect.any(String), toolName: "add", input: { a: 2, b: 3 }, output: { sum: 5 } },
    ]);
    const second = fake.requests[1] as { messages: Array<{ role: string; content: unknown }> };
    expect(second.messages.at(-1)).toMatchObject({ role: "tool" });
    expect(JSON.stringify(second.messages.at(-1)?.content)).toContain("sum");
  });

  it("retries a 429 after the provider's Retry-After and then succeeds", async () => {
    fake.reply({ status: 429, retryAfter: "0" }, { content: "after retry" });
    const result = await generate({
      choices: [choiceFor(fake.baseUrl)],
      messages: [{ role: "user", content: "x" }],
      env: env(),
      trigger: noVault,
    });
    expect(result.content).toBe("after retry");
    expect(fake.requests).toHaveLength(2);
  });

  it("falls back to the next model when the first fails", async () => {
    const broken = choiceFor("http://127.0.0.1:9/v1");
    const result = await generate({
      choices: [broken, choiceFor(fake.baseUrl)],
      messages: [{ role: "user", content: "x" }],
      maxRetries: 0,
      env: env(),
      trigger: noVault,
    });
    expect(result.content).toBe("ok");
  });

  it("fails with a timeout naming the provider when the model does not answer", async () => {
    fake.reply({ hang: true });
    await expect(
      generate({
        choices: [choiceFor(fake.baseUrl)],
        messages: [{ role: "user", content: "x" }],
        timeoutMs: 200,
        maxRetries: 0,
        env: env(),
        trigger: noVault,
      }),
    ).rejects.toMatchObject({ status: 504, message: expect.stringContaining("fakeai") });
  });

  it("names the provider and how to configure it when the key is missing", async () => {
    await expect(
      generate({
        choices: [choiceFor(fake.baseUrl)],
        messages: [{ role: "user", content: "x" }],
        env: {},
        trigger: noVault,
      }),
    ).rejects.toMatchObject({ status: 503, message: expect.stringContaining("FAKEAI_API_KEY") });
  });

  it("takes the key from the vault when the environment has none", async () => {
    const vault = async () => ({ key: "provider:fakeai:api_key", value: "sk-vault" });
    const result = await generate({
      choices: [choiceFor(fake.baseUrl)],
      messages: [{ role: "user", content: "x" }],
      env: {},
      trigger: vault,
    });
    expect(result.content).toBe("ok");
  });

  it("says a local provider is unreachable and how to point at it", async () => {
    const local = choiceFor("http://127.0.0.1:9/v1", {
      id: "ollama",
      local: true,
      envKey: "OLLAMA_BASE_URL",
    });
    await expect(
      generate({
        choices: [local],
        messages: [{ role: "user", content: "x" }],
        maxRetries: 0,
        env: {},
        trigger: noVault,
      }),
    ).rejects.toMatchObject({ status: 502, message: expect.stringContaining("OLLAMA_BASE_URL") });
  });
});

describe("generateStream", () => {
  it("yields text deltas as they arrive, then the usage", async () => {
    fake.reply({ content: "streamed answer" });
    const parts: string[] = [];
    let done: unknown;
    for await (const part of generateStream({
      choices: [choiceFor(fake.baseUrl)],
      messages: [{ role: "user", content: "x" }],
      env: env(),
      trigger: noVault,
    })) {
      if (part.type === "delta") parts.push(part.text);
      else done = part;
    }
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.join("")).toBe("streamed answer");
    expect(done).toMatchObject({ model: "fake-model", usage: { inputTokens: 12, outputTokens: 5 } });
  });

  it("charges an estimate when its caller stops before the usage came, and only once", async () => {
    fake.reply({ content: "y".repeat(400), stall: true });
    const charged: Array<{ inputTokens: number; outputTokens: number }> = [];
    const stream = generateStream({
      choices: [choiceFor(fake.baseUrl)],
      messages: [{ role: "user", content: "x".repeat(40) }],
      env: env(),
      trigger: noVault,
      onStepUsage: (_choice, usage) => {
        charged.push(usage);
      },
    });
    let received = "";
    for await (const part of stream) {
      if (part.type === "delta") received += part.text;
      if (received.length >= 40) break;
    }
    expect(charged).toHaveLength(1);
    expect(charged[0]?.outputTokens).toBe(Math.ceil(received.length / 4));
    expect(charged[0]?.inputTokens).toBeGreaterThanOrEqual(10);
  });

  it("charges nothing more than the usage when the stream ends as it should", async () => {
    fake.reply({ content: "complete" });
    const charged: unknown[] = [];
    for await (const _part of generateStream({
      choices: [choiceFor(fake.baseUrl)],
      messages: [{ role: "user", content: "x" }],
      env: env(),
      trigger: noVault,
      onStepUsage: (_choice, usage) => {
        charged.push(usage);
      },
    }));
    expect(charged).toEqual([{ inputTokens: 12, outputTokens: 5, totalTokens: 17 }]);
  });
});
