import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { jsonSchema, type ModelMessage, type ToolSet, tool } from "ai";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openAiWireDriver } from "../../src/llm/drivers/openai-wire.ts";
import { driverFor, generate } from "../../src/llm/generate.ts";
import { openAiSchema } from "../../src/llm/openai/tools.ts";
import type { GenerateRequest } from "../../src/llm/types.ts";
import { type FakeOpenAI, type FakeReply, fakeModelChoice, startFakeOpenAI } from "../helpers/fake-openai.ts";

/**
 * The agent turn's own OpenAI-wire path (issue #14) against the AI SDK's: the same conversation, tools
 * and scripted answers through both must send the provider the same requests and give the same result.
 * The SDK path is taken by giving the user's message as text parts, which the wire path leaves to it.
 */
let fake: FakeOpenAI;
const noVault = async () => null;
const env = { FAKEAI_API_KEY: "sk-test" };

beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

function weatherTools(log: unknown[]): ToolSet {
  return {
    weather: tool({
      description: "Weather for a city",
      inputSchema: jsonSchema<{ city: string }>({
        type: "object",
        properties: { city: { type: "string" } },
        required: ["city"],
      }),
      execute: async (input) => {
        log.push(input);
        return { city: input.city, sky: "clear" };
      },
    }),
    motto: tool({
      description: "A motto",
      inputSchema: jsonSchema({ type: "object", properties: {} }),
      execute: async () => "Carpe diem",
    }),
  };
}

async function turn(script: FakeReply[], asParts: boolean, extra: Partial<GenerateRequest> = {}) {
  const log: unknown[] = [];
  fake.requests.length = 0;
  fake.reply(...script);
  const question = "Weather in Oslo and a motto?";
  const message: ModelMessage = asParts
    ? { role: "user", content: [{ type: "text", text: question }] }
    : { role: "user", content: question };
  const request: GenerateRequest = {
    choices: [fakeModelChoice(fake.baseUrl)],
    system: "Be brief",
    messages: [{ role: "assistant", content: "Hello" }, message],
    tools: weatherTools(log),
    temperature: 0.2,
    maxTokens: 300,
    env,
    trigger: noVault,
    ...extra,
  };
  expect(driverFor(request.choices[0] as never, request) === openAiWireDriver).toBe(!asParts);
  const result = await generate(request);
  return { result, log, sent: structuredClone(fake.requests) };
}

/** What a request says, without what differs by nature between two runs (the tool call ids). */
const comparable = (sent: unknown) => JSON.parse(JSON.stringify(sent).replace(/call_\d+_[a-z0-9]+/g, "call"));

describe("the OpenAI-wire turn", () => {
  it("sends the same requests and answers the same as the AI SDK across a tool round trip", async () => {
    const script: FakeReply[] = [
      {
        toolCalls: [
          { name: "weather", arguments: { city: "Oslo" } },
          { name: "motto", arguments: {} },
        ],
      },
      { content: "Clear in Oslo. Carpe diem." },
    ];
    const sdk = await turn(script, true);
    const wire = await turn(script, false);
    expect(wire.log).toEqual(sdk.log);
    expect(comparable(wire.sent)).toEqual(comparable(sdk.sent));
    expect(comparable(wire.result)).toEqual(comparable(sdk.result));
    expect(wire.result).toMatchObject({
      content: "Clear in Oslo. Carpe diem.",
      finishReason: "stop",
      usage: { inputTokens: 24, outputTokens: 10 },
    });
    expect(wire.result.toolCalls.map((call) => call.output)).toEqual([
      { city: "Oslo", sky: "clear" },
      "Carpe diem",
    ]);
  });

  it("stops after maxSteps model calls, as the AI SDK does, with the last step's text", async () => {
    const script: FakeReply[] = [
      { toolCalls: [{ name: "motto", arguments: {} }] },
      { toolCalls: [{ name: "motto", arguments: {} }] },
    ];
    const sdk = await turn(script, true, { maxSteps: 2 });
    const wire = await turn(script, false, { maxSteps: 2 });
    expect(wire.sent).toHaveLength(2);
    expect(comparable(wire.result)).toEqual(comparable(sdk.result));
    expect(wire.result.finishReason).toBe("tool-calls");
  });

  it("tells the model about a tool it does not have instead of failing the turn", async () => {
    const { result } = await turn(
      [{ toolCalls: [{ name: "teleport", arguments: { to: "Mars" } }] }, { content: "I cannot." }],
      false,
    );
    expect(result.content).toBe("I cannot.");
    expect(result.toolCalls[0]).toMatchObject({
      toolName: "teleport",
      output: { error: expect.stringContaining("teleport") },
    });
    const told = (fake.requests[1] as { messages: Array<{ role: string; content: string }> }).messages.at(-1);
    expect(told).toMatchObject({ role: "tool", content: expect.stringContaining("no tool named teleport") });
  });

  it("retries a 5xx as the provider asks, then falls back to the next model when one keeps failing", async () => {
    fake.reply({ status: 503, retryAfter: "0" }, { content: "second try" });
    const retried = await generate({
      choices: [fakeModelChoice(fake.baseUrl)],
      messages: [{ role: "user", content: "hi" }],
      maxRetries: 1,
      env,
      trigger: noVault,
    });
    expect(retried.content).toBe("second try");
    expect(fake.requests).toHaveLength(2);
    fake.reply({ status: 404 }, { content: "from the fallback" });
    const second = fakeModelChoice(fake.baseUrl);
    const fellBack = await generate({
      choices: [
        fakeModelChoice(fake.baseUrl),
        { ...second, model: { ...second.model, id: "fake-fallback" } },
      ],
      messages: [{ role: "user", content: "hi" }],
      env,
      trigger: noVault,
    });
    expect(fellBack).toMatchObject({ content: "from the fallback", model: "fake-fallback" });
    expect(fake.requests.map((request) => request.model)).toEqual([
      "fake-model",
      "fake-model",
      "fake-model",
      "fake-fallback",
    ]);
  });

  it("fails an answer it cannot read as the provider's failure (502), not an internal error", async () => {
    const message = (fields: Record<string, unknown>) => ({
      choices: [{ message: { role: "assistant", ...fields }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
    const broken: Record<string, unknown> = {
      "tool calls that are not a list": message({ content: "hi", tool_calls: 5 }),
      "a tool call without its function": message({ content: null, tool_calls: [{ id: "a" }] }),
      "arguments that are not text": message({
        content: null,
        tool_calls: [
          { id: "a", type: "function", function: { name: "weather", arguments: { city: "Oslo" } } },
        ],
      }),
      "content that is not text": message({ content: { text: "hi" } }),
      "choices that are not a list": { choices: "hi", usage: { prompt_tokens: 1, completion_tokens: 1 } },
    };
    let answer: unknown;
    const provider = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = provider.address() as AddressInfo;
      for (const [what, body] of Object.entries(broken)) {
        answer = body;
        const failure = await generate({
          choices: [fakeModelChoice(`http://127.0.0.1:${port}/v1`)],
          messages: [{ role: "user", content: "Weather in Oslo?" }],
          tools: weatherTools([]),
          env,
          trigger: noVault,
        }).then(
          (result) => result,
          (error: unknown) => error,
        );
        expect(failure, what).toMatchObject({
          status: 502,
          message: expect.stringMatching(/^Provider fakeai gave no usable answer for model fake-model: /),
        });
      }
    } finally {
      provider.close();
    }
  });

  it("keeps OpenAI's reasoning models and non-text prompts on the AI SDK", () => {
    const choice = fakeModelChoice("http://x", { driver: "openai" });
    const text = { messages: [{ role: "user", content: "hi" }] } as unknown as GenerateRequest;
    const on = (id: string) => openAiWireDriver.takes({ ...choice, model: { ...choice.model, id } }, text);
    expect(on("gpt-4o")).toBe(true);
    expect(on("gpt-4.1-mini")).toBe(true);
    expect(on("o3")).toBe(false);
    expect(on("gpt-5")).toBe(false);
    expect(on("gpt-4o-search-preview")).toBe(false);
    expect(openAiWireDriver.takes(fakeModelChoice("http://x", { driver: "anthropic" }), text)).toBe(false);
  });

  it("drops from tool schemas what OpenAI refuses, at any depth, and keeps the rest", () => {
    expect(
      openAiSchema({
        type: "object",
        propertyNames: { pattern: "^[a-z]+$" },
        properties: {
          code: { type: "string", pattern: "^(?!x)[a-z]+$" },
          plain: { type: "string", pattern: "^[a-z]+$" },
          list: { type: "array", items: { type: "object", propertyNames: { type: "string" } } },
        },
      }),
    ).toEqual({
      type: "object",
      properties: {
        code: { type: "string" },
        plain: { type: "string", pattern: "^[a-z]+$" },
        list: { type: "array", items: { type: "object" } },
      },
    });
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(openAiSchema({ value }));
        expect(text.includes('"propertyNames"')).toBe(false);
      }),
    );
  });
});
